import { isObj, str, type Block, type Json, type ResultView } from '../shared/view.js';

function ipBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const loc = isObj(result.location) ? result.location : {};
  const asn = isObj(result.asn) ? result.asn : {};
  const place = [loc.city, loc.region, loc.country].filter((v) => typeof v === 'string' && v !== '').join(', ');
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Place',
      fields: [
        { label: 'Address', value: `${str(result.ip)} (IPv${str(result.version)}, ${str(result.type)})` },
        { label: 'Country', value: loc.country ? `${str(loc.country)}${loc.country_code ? ` (${str(loc.country_code)})` : ''}` : 'unknown' },
        { label: 'City', value: place || 'unknown' },
        ...(loc.timezone ? [{ label: 'Time zone', value: str(loc.timezone) }] : []),
        ...(typeof loc.latitude === 'number' ? [{ label: 'Coordinates', value: `${str(loc.latitude)}, ${str(loc.longitude)}${loc.accuracy_radius ? ` (± ${str(loc.accuracy_radius)} km)` : ''}` }] : []),
        ...(result.hostname ? [{ label: 'Host name', value: str(result.hostname) }] : []),
      ],
    },
    {
      type: 'fields',
      title: 'Network',
      fields: [
        { label: 'AS', value: asn.number === null || asn.number === undefined ? 'unknown' : `AS${str(asn.number)}` },
        { label: 'Organisation', value: str(asn.organization ?? loc.isp) },
        { label: 'Network', value: str(asn.network ?? loc.network ?? result.range) },
      ],
    },
  ];
  const sec = result.security;
  if (isObj(sec)) {
    const listed = Array.isArray(sec.blacklists) ? sec.blacklists.filter(isObj).filter((b) => b.listed === true).map((b) => `listed on ${str(b.list)}`) : [];
    const reasons = [
      ...(sec.is_tor === true ? ['Tor exit node'] : []),
      ...(sec.is_proxy === true ? ['listed as a proxy'] : []),
      ...(sec.is_hosting === true ? ['hosting network'] : []),
      ...(sec.is_bogon === true ? ['bogon (not routed on the internet)'] : []),
      ...listed,
    ];
    const threats = Array.isArray(sec.threats) ? sec.threats.map(str) : [];
    const score = Number(sec.risk_score);
    blocks.push({
      type: 'fields',
      title: 'Risk',
      fields: [
        { label: 'Risk score', value: `${str(sec.risk_score)} of 100`, tone: score >= 50 ? 'bad' : score > 0 ? 'muted' : 'ok' },
        { label: 'Reasons', value: reasons.length ? reasons.join('; ') : 'none found' },
        ...(threats.length ? [{ label: 'Threats', value: threats.join(', ') }] : []),
      ],
    });
  }
  return blocks;
}

export const ipLookupView: ResultView = { blocks: ipBlocks };
