/**
 * What makes a check that cannot run (an `unavailable` entry such as `ip.tor`) run: the exact
 * command, shared by Getting started (which default rules cannot fire yet) and Data sources (per
 * source). docs/data.md has the whole story.
 */
export interface Advice {
  /** What is missing, in a sentence. */
  missing: string;
  /** The command that fixes it, run in the service's folder (or `node dist/data-update/cli.js` in the image). */
  command: string;
  /** What else works, when there is something. */
  otherwise?: string;
}

const PAID = 'MAXMIND_ACCOUNT_ID=… MAXMIND_LICENSE_KEY=… DATA_UPDATE_MAXMIND_EDITIONS=GeoLite2-City,GeoLite2-ASN,GeoIP2-Anonymous-IP npm run data:update';

/** Keyed by the check's name in `unavailable`. */
export const CHECK_ADVICE: Record<string, Advice> = {
  'ip.tor': { missing: 'No Tor exit list is loaded.', command: 'npm run data:update', otherwise: 'It fetches tor-exit-nodes.txt into DATA_DIR; the service reads it within seconds, no restart.' },
  'ip.proxy': { missing: 'No proxy list and no Anonymous-IP database is loaded.', command: 'npm run data:update', otherwise: 'It fetches an open proxy list (monosans/proxy-list, re-checked hourly) into DATA_DIR/proxy-list.txt; MaxMind\'s GeoIP2 Anonymous-IP (paid) adds more: ' + PAID },
  'ip.vpn': {
    missing: 'No Anonymous-IP database is loaded: only the networks VPN services run themselves (bundled ASN data) and the servers on DATA_DIR/vpn-list.txt (Mullvad, PIA, fetched by npm run data:update) are recognised.',
    command: PAID,
    otherwise: 'MaxMind\'s GeoIP2 Anonymous-IP is a paid database (a licence key from your MaxMind account).',
  },
  'ip.datacenter': { missing: 'No data-center ranges are loaded.', command: 'npm run data:update', otherwise: 'It fetches the public cloud ranges into DATA_DIR.' },
  'ip.geo': { missing: 'No geolocation database is loaded.', command: 'MAXMIND_ACCOUNT_ID=… MAXMIND_LICENSE_KEY=… npm run data:update', otherwise: 'GeoLite2 is free with a MaxMind account; the bundled DB-IP country data serves until then.' },
};

/** Keyed by the source's name on the Data sources page. */
export const SOURCE_ADVICE: Record<string, Advice> = {
  'ip.list.tor': CHECK_ADVICE['ip.tor']!,
  'ip.list.proxy': CHECK_ADVICE['ip.proxy']!,
  'ip.list.vpn': { missing: 'No VPN server list is loaded.', command: 'npm run data:update', otherwise: 'It fetches Mullvad\'s and PIA\'s server lists into DATA_DIR/vpn-list.txt.' },
  'ip.maxmind.anonymous_ip': CHECK_ADVICE['ip.vpn']!,
  'ip.list.datacenter': CHECK_ADVICE['ip.datacenter']!,
  'ip.maxmind.city': CHECK_ADVICE['ip.geo']!,
  'ip.maxmind.asn': { missing: 'No MaxMind ASN database is loaded (the bundled ASN data serves).', command: 'MAXMIND_ACCOUNT_ID=… MAXMIND_LICENSE_KEY=… npm run data:update' },
};

export function AdviceText({ advice }: { advice: Advice }) {
  return (
    <>
      {advice.missing} Run:
      <div class="command"><pre><code>{advice.command}</code></pre></div>
      {advice.otherwise ? <span class="muted">{advice.otherwise}</span> : null}
    </>
  );
}
