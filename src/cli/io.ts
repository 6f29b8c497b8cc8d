/** What a `netdiag` command reads and writes: the environment, stdout and stderr, and whether they are terminals. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** stdout is a terminal: the API commands print tables instead of JSON. */
  stdoutIsTTY?: boolean;
  /** stderr is a terminal: a job's progress is a bar redrawn in place instead of lines. */
  stderrIsTTY?: boolean;
}
