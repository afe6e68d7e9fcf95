import type { EvaluationContext } from './ports.js';

/**
 * The facts a condition can read, by the dotted path rule files use. Each field knows its type (so a
 * rule file that compares a number with text is refused at load, not silently false at run time),
 * how to read it, and which check in `context.unavailable` it depends on.
 *
 * Three readings (see docs/rules.md, "Unknown and absent"):
 * - a value;
 * - UNKNOWN: the check could not run (its name is in `unavailable`), the fact is `null`, or it is
 *   not of the field's type;
 * - ABSENT: an optional field the caller did not send (`user.*`, `device_intelligence.*`), or
 *   `email.suggested_domain` when no typo was found. Absent is a known answer, not a failure.
 */
export type FieldType = 'text' | 'number' | 'boolean' | 'ip';

export type Scalar = string | number | boolean;

export const UNKNOWN = Symbol('unknown');
export const ABSENT = Symbol('absent');
export type Reading = Scalar | typeof UNKNOWN | typeof ABSENT;

export interface Field {
  type: FieldType;
  /** Whether a value read is of the field's type; data files can hold anything (issue 11, finding 8). */
  fits(value: Scalar): boolean;
  description: string;
  /** The value, `null` when the service does not know it, `undefined` when it was not sent. */
  read(context: EvaluationContext): Scalar | null | undefined;
  /** The check in `context.unavailable` this fact comes from. */
  check: string | null;
  /** `null` is an answer (nothing found), not a failure. */
  nullIsAbsent: boolean;
  /**
   * Whether the number read is only a lower bound in this context (a distinct count past its cap,
   * named in `history.at_least`); `null` for a field that is always exact. The engine lets such a
   * number decide `gt`/`gte` only when the bound alone meets the threshold (see engine.ts).
   */
  atLeast: ((context: EvaluationContext) => boolean) | null;
}

/** Every field has the same shape (no optional keys), so V8 keeps property reads on it monomorphic. */
const FITS: Record<FieldType, Field['fits']> = {
  text: (value) => typeof value === 'string',
  ip: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  boolean: (value) => typeof value === 'boolean',
};

const field = (type: FieldType, description: string, read: Field['read'], check: string | null = null, nullIsAbsent = false, atLeast: Field['atLeast'] = null): Field => ({
  type,
  fits: FITS[type],
  description,
  read,
  check,
  nullIsAbsent,
  atLeast,
});

const email = (
  key: 'address' | 'normalized' | 'domain' | 'canonical' | 'deliverable' | 'disposable' | 'free_provider' | 'role_account' | 'relay',
  type: FieldType,
  description: string,
  check?: string,
): Field => field(type, description, (c) => c.email[key], check);

const ip = (
  key: Exclude<keyof EvaluationContext['ip'], 'version'>,
  type: FieldType,
  description: string,
  check?: string,
): Field => field(type, description, (c) => c.ip[key], check);

const user = (key: 'user_id' | 'first_name' | 'last_name', description: string): Field =>
  field('text', description, (c) => c.user?.[key]);

const device = (
  key: 'device_hash' | 'device_os' | 'device_model' | 'browser_hash' | 'browser_name' | 'browser_version' | 'cookie_enabled',
  type: FieldType,
  description: string,
): Field => field(type, description, (c) => c.device_intelligence?.[key]);

/**
 * Behaviour history (`history.*`): unknown when the store did not answer (`history` is null, `store`
 * in `unavailable`); `history.device.*` absent when no device hash was sent, `history.user.*` when no
 * user id was, and `history.user.previous.*` on a user's first event.
 */
function HISTORY_FIELDS() {
  type H = NonNullable<EvaluationContext['history']>;
  /** A distinct count, capped: a lower bound when its path (`ip.accounts_24h`) is in `history.at_least`. */
  const capped = (path: string) => (c: EvaluationContext) => c.history !== null && c.history.at_least.includes(path);
  /** An event count: a lower bound when the history is partial (this replica's own counts: the store did not answer). */
  const counted = (c: EvaluationContext) => c.history !== null && c.history.partial === true;
  const h = (type: FieldType, description: string, read: (history: H, c: EvaluationContext) => Scalar | null | undefined, atLeast: Field['atLeast'] = null): Field =>
    field(type, description, (c) => (c.history === null ? null : read(c.history, c)), null, false, atLeast);
  const withDevice = (c: EvaluationContext) => c.device_intelligence?.device_hash !== undefined;
  const withUser = (c: EvaluationContext) => c.user?.user_id !== undefined;
  const deviceField = (key: 'events_1h' | 'accounts_30d', description: string, atLeast: Field['atLeast'] = null): Field =>
    field('number', description, (c) => (!withDevice(c) ? undefined : c.history === null ? null : (c.history.device?.[key] ?? null)), null, false, atLeast);
  const userField = (type: FieldType, description: string, read: (user: NonNullable<H['user']>, c: EvaluationContext) => Scalar | null | undefined, atLeast: Field['atLeast'] = null): Field =>
    field(type, description, (c) => (!withUser(c) ? undefined : c.history === null || c.history.user === null ? null : read(c.history.user, c)), null, false, atLeast);
  const previous = (type: FieldType, key: 'country_code' | 'distance_km' | 'speed_kmh' | 'same_network' | 'anonymous', description: string): Field =>
    userField(type, description, (user) => (user.previous === null ? undefined : user.previous[key]));
  return {
    'history.ip.events_1h': h('number', 'Evaluations from this IP address (an IPv6 address: its /64) in the last hour, this one included.', (x) => x.ip.events_1h, counted),
    'history.ip.events_24h': h('number', 'The same in the last 24 hours.', (x) => x.ip.events_24h, counted),
    'history.ip.accounts_24h': h('number', 'Distinct accounts (user ids, else canonical e-mails) from this address in the last 24 hours (at most 100: then at least).', (x) => x.ip.accounts_24h, capped('ip.accounts_24h')),
    'history.email.events_24h': h('number', 'Evaluations of this canonical e-mail address in the last 24 hours.', (x) => x.email.events_24h, counted),
    'history.email.devices_30d': h('number', 'Distinct devices seen with this e-mail address in the last 30 days.', (x) => x.email.devices_30d, capped('email.devices_30d')),
    'history.device.events_1h': deviceField('events_1h', 'Evaluations from this device in the last hour; absent without a device hash.', counted),
    'history.device.accounts_30d': deviceField('accounts_30d', 'Distinct accounts behind this device in the last 30 days; absent without a device hash.', capped('device.accounts_30d')),
    'history.user.new_device': userField('boolean', 'A device this user was never seen with; absent without a user id or a device hash; unknown while the user has no device on record (the first event, or earlier ones sent none).',
      (user, c) => (withDevice(c) ? user.new_device : undefined)),
    'history.user.new_country': userField('boolean', 'A country this user was never seen in; absent without a user id; unknown when the country is, or while the user has no country on record.', (user) => user.new_country),
    'history.user.devices_30d': userField('number', 'Distinct devices of this user in the last 30 days.', (user) => user.devices_30d, capped('user.devices_30d')),
    'history.user.countries_24h': userField('number', 'Distinct countries of this user in the last 24 hours.', (user) => user.countries_24h, capped('user.countries_24h')),
    'history.user.previous.country_code': previous('text', 'country_code', 'Country of the user\'s previous event; absent on the first.'),
    'history.user.previous.distance_km': previous('number', 'distance_km', 'Least distance from the previous event\'s place (accuracy radii subtracted); unknown when either place is.'),
    'history.user.previous.speed_kmh': previous('number', 'speed_kmh', 'That distance over the time between the events; unknown when either place is.'),
    'history.user.previous.same_network': previous('boolean', 'same_network', 'Both events from one autonomous system and country; unknown when either is.'),
    'history.user.previous.anonymous': previous('boolean', 'anonymous', 'Either event from a known VPN, proxy, Tor exit or hosting network; unknown when neither is and a flag of either is unknown.'),
  } satisfies Record<string, Field>;
}

export const FIELDS = {
  event_type: field('text', 'The event type being evaluated.', (c) => c.event_type),

  'email.address': email('address', 'text', 'The address as sent.'),
  'email.normalized': email('normalized', 'text', 'Local part as sent, lower-cased punycode domain.'),
  'email.local_part': field('text', 'The part before "@", as sent.', (c) => c.request.parsedEmail.local),
  'email.domain': email('domain', 'text', 'Lower-cased domain, IDN as punycode, no trailing dot.'),
  'email.canonical': email('canonical', 'text', 'One person\'s many addresses folded to one form.'),
  'email.deliverable': email('deliverable', 'boolean', 'The domain accepts mail (MX look-up).', 'email.mx'),
  'email.deliverability': field(
    'text',
    '"deliverable" or "undeliverable"; unknown when the MX look-up did not complete.',
    // The enum spells "unknown" as a value; rules must see it as UNKNOWN, never as a string to match.
    (c) => (c.email.deliverability === 'unknown' ? null : c.email.deliverability),
    'email.mx',
  ),
  'email.disposable': email('disposable', 'boolean', 'The domain hands out throw-away addresses.', 'email.disposable'),
  'email.free_provider': email('free_provider', 'boolean', 'A free mailbox provider (gmail.com...).', 'email.free_provider'),
  'email.role_account': email('role_account', 'boolean', 'A role address (admin@, support@...).', 'email.role_account'),
  'email.relay': email('relay', 'boolean', 'A forwarding relay (Apple Hide My Email...).', 'email.relay'),
  'email.suggested_domain': field(
    'text',
    'The domain the user probably meant (a likely typo); absent when none.',
    (c) => c.email.suggested_domain,
    null,
    true,
  ),

  'ip.address': ip('address', 'ip', 'Canonical address; IPv4-mapped IPv6 reads as IPv4.'),
  'ip.version': field('number', '4 or 6.', (c) => c.ip.version),
  'ip.embedded_ipv4': field(
    'ip',
    'The IPv4 client address an IPv6 address carries (NAT64, 6to4, Teredo...); absent when none.',
    (c) => c.ip.embedded_ipv4,
    null,
    true,
  ),
  'ip.transition': field(
    'text',
    'How the IPv6 address carries ip.embedded_ipv4: ipv4_compatible, siit, nat64, 6to4 or teredo; absent when none.',
    (c) => c.ip.transition,
    null,
    true,
  ),
  'ip.country_code': ip('country_code', 'text', 'ISO 3166-1 alpha-2, upper case (GB).', 'ip.geo'),
  'ip.country': ip('country', 'text', 'Country name in English.', 'ip.geo'),
  'ip.region': ip('region', 'text', 'First subdivision name.', 'ip.geo'),
  'ip.city': ip('city', 'text', 'City name.', 'ip.geo'),
  'ip.postal_code': ip('postal_code', 'text', 'Postal code.', 'ip.geo'),
  'ip.latitude': ip('latitude', 'number', 'Latitude in degrees.', 'ip.geo'),
  'ip.longitude': ip('longitude', 'number', 'Longitude in degrees.', 'ip.geo'),
  'ip.accuracy_radius_km': ip('accuracy_radius_km', 'number', 'Accuracy radius in kilometres.', 'ip.geo'),
  'ip.time_zone': ip('time_zone', 'text', 'IANA time zone (Europe/London).', 'ip.geo'),
  'ip.asn': ip('asn', 'number', 'Autonomous system number.', 'ip.asn'),
  'ip.as_organization': ip('as_organization', 'text', 'Organisation of the autonomous system.', 'ip.asn'),
  'ip.is_tor': ip('is_tor', 'boolean', 'A Tor exit node.', 'ip.tor'),
  'ip.is_proxy': ip('is_proxy', 'boolean', 'A known open or anonymising proxy.', 'ip.proxy'),
  'ip.is_datacenter': ip('is_datacenter', 'boolean', 'A hosting or cloud provider range.', 'ip.datacenter'),
  'ip.is_vpn': ip('is_vpn', 'boolean', 'A commercial VPN exit.', 'ip.vpn'),
  'ip.is_bogon': ip('is_bogon', 'boolean', 'Private, reserved or otherwise unroutable (for an IPv6 address that carries an IPv4 one, that IPv4 address).'),

  'user.user_id': user('user_id', "The caller's identifier of the user; absent when not sent."),
  'user.first_name': user('first_name', 'First name; absent when not sent.'),
  'user.last_name': user('last_name', 'Last name; absent when not sent.'),

  'device_intelligence.device_hash': device('device_hash', 'text', 'Device fingerprint; absent when not sent.'),
  'device_intelligence.device_os': device('device_os', 'text', 'Operating system; absent when not sent.'),
  'device_intelligence.device_model': device('device_model', 'text', 'Device model; absent when not sent.'),
  'device_intelligence.browser_hash': device('browser_hash', 'text', 'Browser fingerprint; absent when not sent.'),
  'device_intelligence.browser_name': device('browser_name', 'text', 'Browser name; absent when not sent.'),
  'device_intelligence.browser_version': device('browser_version', 'text', 'Browser version; absent when not sent.'),
  'device_intelligence.cookie_enabled': device('cookie_enabled', 'boolean', 'Cookies enabled; absent when not sent.'),

  ...HISTORY_FIELDS(),

  'lists.blocked': field('boolean', 'The request matched an entry of the account\'s block list (e-mail, domain, IP or CIDR, device, user id).', (c) => c.lists.block.length > 0),
  'lists.allowed': field('boolean', 'The request matched an entry of the account\'s allow list.', (c) => c.lists.allow.length > 0),
} satisfies Record<string, Field>;

export type FieldPath = keyof typeof FIELDS;

export const FIELD_PATHS = Object.keys(FIELDS) as [FieldPath, ...FieldPath[]];

/**
 * A velocity counter the rule file defines (docs/rules.md "Velocity counters"), read as
 * `velocity.<name>`: a number, with this event counted when the counter counts its event type.
 * Unknown when the store did not answer, and when the request does not carry the counter's key (no
 * device hash, no user id): a count of nothing is not zero.
 */
export type VelocityPath = `velocity.${string}`;
/** Any path a condition may read: a fixed field, or a velocity counter of the file. */
export type RulePath = FieldPath | VelocityPath;
export const VELOCITY_FIELD = /^velocity\.([a-z][a-z0-9_]{0,63})$/;

const VELOCITY_PATHS = new WeakMap<Field, VelocityPath>();

export function velocityField(name: string): Field {
  const f = field('number', `Velocity counter ${name} of the rule file, this event counted; unknown without its key.`, (c) => (c.history === null ? null : (c.history.velocity?.[name] ?? null)));
  VELOCITY_PATHS.set(f, `velocity.${name}`);
  return f;
}

export const isVelocityPath = (path: string): path is VelocityPath => VELOCITY_FIELD.test(path);
export const isRulePath = (path: unknown): path is RulePath => typeof path === 'string' && (Object.hasOwn(FIELDS, path) || isVelocityPath(path));

/** The field a condition's path names (a velocity counter's made for it). */
export const fieldAt = (path: RulePath): Field => (isVelocityPath(path) ? velocityField(path.slice('velocity.'.length)) : FIELDS[path]);

const PATHS = new Map<Field, FieldPath>(Object.entries(FIELDS).map(([path, field]) => [field, path as FieldPath]));

/** The dotted path of a field (for explanations and the admin API's catalogue). */
export const pathOf = (field: Field): RulePath => PATHS.get(field) ?? VELOCITY_PATHS.get(field)!;

/**
 * Reads a field as the engine sees it: a value, UNKNOWN or ABSENT. A value of the wrong type (a
 * number where a City database should hold a name, NaN for a latitude) is UNKNOWN: the engine
 * never compares what it cannot trust, whatever the loaders let through.
 */
export function readField(field: Field, context: EvaluationContext): Reading {
  if (field.check !== null && context.unavailable.has(field.check)) return UNKNOWN;
  const value = field.read(context);
  if (value === undefined) return ABSENT;
  if (value === null) return field.nullIsAbsent ? ABSENT : UNKNOWN;
  return field.fits(value) ? value : UNKNOWN;
}
