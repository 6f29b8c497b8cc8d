// Progressive enhancement only: every form works without this file.
// Copy buttons: <button data-copy="element-id" hidden> becomes visible and copies that element's text.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.getAttribute('data-copy'));
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Copy failed: select the text';
      }
    });
  }
  // Forms that do something that cannot be undone ask first.
  for (const form of document.querySelectorAll('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  }
  // A running job's page follows the job: its items as they complete, then the finished page.
  // Without this script the page reloads itself (a <noscript> refresh) until the job is done.
  const head = document.querySelector('[data-job-events]');
  if (head && window.EventSource) {
    const progress = document.getElementById('job-progress');
    const done = document.getElementById('job-done');
    const status = document.getElementById('job-status');
    const live = document.getElementById('job-live');
    const events = new window.EventSource(head.getAttribute('data-job-events'));
    let seen = Number(done ? done.textContent : 0);
    events.addEventListener('item', () => {
      seen++;
      if (progress) progress.value = seen;
      if (done) done.textContent = String(seen);
      if (status && status.textContent === 'queued') status.textContent = 'running';
    });
    events.addEventListener('job', () => {
      events.close();
      if (live) live.textContent = 'Finished: loading the result…';
      window.location.reload();
    });
    events.addEventListener('error', (event) => {
      // An error event with data is the stream's own last word; without data the browser reconnects.
      if (event.data && live) live.textContent = 'The progress stream stopped: reload the page to see the job.';
    });
  }
});
