import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import bytes from 'bytes';
import ipaddr from 'ipaddr.js';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { HookrelayError } from './errors.js';
import { TRANSFORM_DEFAULTS } from './transform-defaults.js';
import { DEFAULT_SQLITE_CACHE_BYTES } from './sqlite-cache-size.js';
import { isStandardWebhooksSecret, STANDARD_WEBHOOKS_SECRET_FORM } from './signing/standard-webhooks-secret.js';
import { SERVICE_SIGNATURE_HEADER, SIGNATURE_SCHEMES } from './signing/scheme.js';

/** Levels of nesting a body may have unless `maxDepth` says otherwise: far beyond any real event. */
export const DEFAULT_MAX_DEPTH = 64;
/** The highest `maxDepth` allowed, and the deepest stored body a reader parses: recursive readers stay far from the stack's end. */
export const MAX_READABLE_DEPTH = 512;

const DEFAULT_SIGNATURE_HEADER = SERVICE_SIGNATURE_HEADER.toLowerCase();

/**
 * One zod schema for every setting. Sources of values, lowest precedence first: defaults, environment
 * variables, the optional YAML file named by HOOKRELAY_CONFIG. Read once at start, validated, frozen,
 * and passed to the modules that need it (no module reads process.env itself).
 */

const byteSize = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = typeof value === 'number' ? value : bytes.parse(value.trim());
  if (parsed === null || !Number.isInteger(parsed) || parsed <= 0) {
    ctx.addIssue({ code: 'custom', message: `expected a positive size such as 1048576, 512kb or 1mb, got ${JSON.stringify(value)}` });
    return z.NEVER;
  }
  return parsed;
});

function isCidrOrAddress(entry: string): boolean {
  if (ipaddr.isValid(entry)) return true;
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

const secretList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter((s) => s.length > 0));

/** Addresses or CIDRs, as a list or a comma-separated string; a bare address is one host. */
const cidrList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0))
  .superRefine((entries, ctx) => {
    entries.forEach((entry, i) => {
      if (!isCidrOrAddress(entry)) ctx.addIssue({ code: 'custom', path: [i], message: `expected an IP address or CIDR such as 10.0.0.0/8, got ${JSON.stringify(entry)}` });
    });
  });

export const SourceConfigSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'use lower-case letters, digits, "-" and "_"'),
    scheme: z.enum(SIGNATURE_SCHEMES).default('hmac-sha256-hex'),
    secrets: secretList.default([]),
    /** Header that carries the hex signature for hmac-sha256-hex. */
    signatureHeader: z.string().min(1).default(DEFAULT_SIGNATURE_HEADER).transform((h) => h.toLowerCase()),
    /** standard-webhooks only: how far webhook-timestamp may be from now. */
    toleranceSeconds: z.coerce.number().int().positive().default(300),
  })
  .strict()
  .superRefine((source, ctx) => {
    if (source.scheme !== 'standard-webhooks') return;
    source.secrets.forEach((secret, i) => {
      if (!isStandardWebhooksSecret(secret)) ctx.addIssue({ code: 'custom', path: ['secrets', i], message: `must be ${STANDARD_WEBHOOKS_SECRET_FORM}` });
    });
  });
export type SourceConfig = z.infer<typeof SourceConfigSchema>;

const RedriveSettingsSchema = z
  .object({
    enabled: z.boolean().default(true),
    /** Redriven dead letters started per second per rule, unless the rule sets its own. */
    maxPerSecond: z.coerce.number().positive().max(1000).default(10),
    /** How often open outages are read from the store, and a probe is sent for those without traffic. */
    checkIntervalMs: z.coerce.number().int().positive().default(5_000),
  })
  .strict();

/** `delivery.redrive`: true, false, or { enabled, maxPerSecond, checkIntervalMs }; off unless set. */
const RedriveConfigSchema = z
  .union([z.boolean().transform((enabled) => RedriveSettingsSchema.parse({ enabled })), RedriveSettingsSchema])
  .prefault(false);

export const ConfigSchema = z
  .object({
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    /** Where webhooks are received. Loopback by default: set 0.0.0.0 (or an interface address) to receive from other machines. */
    host: z.string().min(1).default('127.0.0.1'),
    publicUrl: z.url().optional(),
    dataDir: z.string().min(1).default('./data'),
    rulesDir: z.string().min(1).default('./rules'),
    /** Largest rule file read; a larger one is reported as an error and not read. */
    rulesMaxFileBytes: byteSize.default(1024 * 1024),
    /** Pinned contracts (docs/schema.md): `dir` holds one `*.schema.json` per (source, event); default `contracts` beside the rules directory; missing: none. */
    contracts: z.object({ dir: z.string().min(1).optional() }).strict().prefault({}),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** `all`: a line per request and per webhook received; `errors`: only for answers of 400 and above (less log and CPU at high volume). */
    logRequests: z.enum(['all', 'errors']).default('all'),
    /** `pretty`: readable lines; `json`: one JSON object a line. Unset: pretty on a terminal, JSON otherwise. */
    logFormat: z.enum(['json', 'pretty']).optional(),
    durability: z.enum(['full', 'normal']).default('full'),
    /**
     * What this node runs: `all` receives webhooks and delivers; `receiver` receives (and serves the admin
     * API and console) without a delivery loop; `worker` delivers and serves the admin API, and answers
     * webhooks 503 `not_a_receiver` so a load balancer sends them to a receiver.
     */
    role: z.enum(['all', 'receiver', 'worker']).default('all'),
    /**
     * Commit pacing under load: requests arriving meanwhile share the next ingest commit. It saves CPU per event
     * under steady independent arrivals but slows a few senders that each wait for their answer.
     * SQLite (durability full), while the event loop is busy: the shortest time between two commits; default 0 (off).
     * PostgreSQL, after a batch of 4 or more events: how long the next batch gathers from its first event;
     * default 2 ms, as every commit costs the shared database a WAL flush.
     */
    commitIntervalMs: z.coerce.number().min(0).max(100).optional(),
    maxBody: byteSize.default(1024 * 1024),
    /** How deep a body may nest objects and arrays (ingest, edited replay, import); deeper is 422 too_deeply_nested. */
    maxDepth: z.coerce.number().int().min(1).max(MAX_READABLE_DEPTH).default(DEFAULT_MAX_DEPTH),
    sources: z
      .array(SourceConfigSchema)
      .min(1)
      .prefault([{ name: 'checkout' }])
      .superRefine((sources, ctx) => {
        const seen = new Set<string>();
        sources.forEach((s, i) => {
          if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate source name "${s.name}"` });
          seen.add(s.name);
        });
      }),
    rules: z
      .object({
        /** How JSONata transforms are bounded: each runs in a sandbox thread that is ended at its time limit. */
        transform: z
          .object({
            /** The longest one transform may run, whatever it does; beyond it its delivery is dead-lettered. */
            timeoutMs: z.coerce.number().int().min(10).max(60_000).default(TRANSFORM_DEFAULTS.timeoutMs),
            /** The largest body a transform may produce (bytes or `1mb`); beyond it its delivery is dead-lettered. */
            maxOutputBytes: byteSize.default(TRANSFORM_DEFAULTS.maxOutputBytes),
            /** Heap of each sandbox thread in MiB; a transform that outgrows it is ended, its delivery dead-lettered. */
            maxMemoryMb: z.coerce.number().int().min(16).max(4096).default(TRANSFORM_DEFAULTS.maxMemoryMb),
            /** Sandbox threads per thread that renders (the delivery thread; the receiver's for explain and dry runs). */
            workers: z.coerce.number().int().min(1).max(32).default(TRANSFORM_DEFAULTS.workers),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    delivery: z
      .object({
        /** CIDRs the SSRF guard lets destinations resolve to although they are not public (e.g. 127.0.0.1/32). */
        allowNetworks: z
          .union([z.string(), z.array(z.string())])
          .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s.length > 0 && s !== 'none'))
          .default([]),
        /** The ceiling of attempts in flight at once per destination origin, unless a rule sets its own. */
        concurrency: z.coerce.number().int().positive().default(256),
        /** Adapt each destination's limit between 1 and its ceiling to its latency and errors; false pins it at the ceiling. */
        adaptive: z.boolean().default(true),
        /** Attempts in flight at once in total, over every destination. */
        maxInFlight: z.coerce.number().int().positive().default(512),
        batchSize: z.coerce.number().int().positive().default(32),
        /** How long a claim leases a delivery; a running attempt renews its lease, and is abandoned if it cannot. */
        leaseMs: z.coerce.number().int().positive().default(10 * 60_000),
        pollIntervalMs: z.coerce.number().int().positive().default(1_000),
        /** How long the worker gathers newly due deliveries before it claims them together; 0 claims each commit's at once. */
        claimDelayMs: z.coerce.number().int().min(0).max(1_000).default(5),
        failureThreshold: z.coerce.number().int().positive().default(5),
        coolDownMs: z.coerce.number().int().positive().default(30_000),
        /** Send the retryable dead letters of an outage again when the destination recovers, for rules without a `redrive:` of their own. */
        redrive: RedriveConfigSchema,
        /**
         * Run the delivery loop in a thread of its own, with its own database connection, so that sending
         * never delays acknowledging webhooks; false runs it on the receiver's event loop.
         */
        thread: z.boolean().default(true),
        /**
         * The delivery thread's nice value (Linux): when the cores are busy, acknowledging webhooks (which the
         * checkout service never retries) goes before forwarding (which waits durably in the outbox).
         */
        threadNice: z.coerce.number().int().min(0).max(19).default(10),
        /** Deprecated: `false` means `role: receiver` (a warning says so at start). */
        enabled: z.boolean().optional(),
      })
      .strict()
      .prefault({}),
    cluster: z
      .object({
        /** How often a node records its heartbeat in the node registry; it counts as gone after 3 missed ones. */
        heartbeatMs: z.coerce.number().int().min(100).max(300_000).default(5_000),
      })
      .strict()
      .prefault({}),
    alerts: z
      .object({
        /** Where alert messages go (Slack-compatible `{"text": ...}` JSON, signed); none are sent without it. */
        url: z.url({ protocol: /^https?$/ }).optional(),
        /** Signs each message as rules sign deliveries (`hmac-sha256-hex` over the body, header X-Hookrelay-Signature). */
        secret: z.string().min(1).optional(),
        /** At most one message per destination (and one about dead letters) in this long; later ones are counted and reported with the next. */
        dampingMs: z.coerce.number().int().positive().default(10 * 60_000),
        /** A message when the number of dead letters reaches this (again after it fell below). */
        deadLetterThreshold: z.coerce.number().int().positive().default(100),
        /** How often the dead-letter count is read. */
        checkIntervalMs: z.coerce.number().int().positive().default(60_000),
      })
      .strict()
      .prefault({}),
    server: z
      .object({
        headersTimeoutMs: z.coerce.number().int().positive().default(10_000),
        requestTimeoutMs: z.coerce.number().int().positive().default(30_000),
        keepAliveTimeoutMs: z.coerce.number().int().positive().default(5_000),
        shutdownGraceMs: z.coerce.number().int().positive().default(10_000),
        /** Bytes of webhook bodies held at once over every request in flight; beyond it, 503 `server_busy`. */
        maxBufferedBytes: byteSize.default(64 * 1024 * 1024),
        /** Open connections per listener; Node closes a connection beyond it as soon as it is accepted. */
        maxConnections: z.coerce.number().int().positive().default(1024),
        /**
         * Addresses or CIDRs of the proxies in front (load balancers): a request from one of them is counted,
         * for the failed-authentication limit, under the address it names in X-Forwarded-For.
         */
        trustProxy: cidrList.default([]),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        /** Serve Prometheus metrics at GET /metrics. */
        enabled: z.boolean().default(true),
        /** When set, scrapes must send `Authorization: Bearer <token>`; unauthenticated otherwise, like most exporters. */
        token: z.string().min(1).optional(),
        /** Distinct unrecognised event names that get their own label value; later ones are counted as `_other`. */
        maxEventLabels: z.coerce.number().int().min(0).default(50),
      })
      .strict()
      .prefault({}),
    retention: z
      .object({
        enabled: z.boolean().default(true),
        /** Events first received longer ago than this are pruned. */
        maxAgeDays: z.coerce.number().positive().default(30),
        /** At most this many events are kept; the oldest beyond it are pruned. */
        maxEvents: z.coerce.number().int().positive().default(1_000_000),
        /**
         * Keys of removed events stay in the ledger of seen keys this long after they were first stored: a
         * sender's replay (or a re-import) within it is still a duplicate. A key whose event is stored stays.
         */
        seenKeysDays: z.coerce.number().positive().default(90),
        /**
         * PostgreSQL: days of history per partition of events, deliveries and attempts. Retention drops a
         * partition once all of it is older than maxAgeDays, so the oldest events are kept up to this much longer.
         */
        partitionDays: z.coerce.number().int().positive().max(366).default(7),
        /** How often a pruning pass runs (the first one runs shortly after start). */
        intervalMs: z.coerce.number().int().positive().default(60 * 60_000),
        /** Events deleted per transaction: small, so ingest never waits long for the write lock. */
        batchSize: z.coerce.number().int().positive().max(10_000).default(500),
      })
      .strict()
      .prefault({}),
    schema: z
      .object({
        /** Learn the observed schema of each (source, event name) and record its drifts (on the node holding the `schema` lease). */
        enabled: z.boolean().default(true),
        /** How often new events are read and the summary saved (one transaction per save). */
        intervalMs: z.coerce.number().int().positive().default(5_000),
        /** Events read per query, bodies included: with bodies up to the ingest limit, what one batch holds in memory. */
        batchSize: z.coerce.number().int().positive().max(5_000).default(50),
        /** Events learned per pass at most; a backlog is worked off pass after pass. */
        maxEventsPerPass: z.coerce.number().int().positive().default(5_000),
        /**
         * Time one pass spends learning at most (parsing and walking bodies) before its pause: a backlog is
         * learned in short slices, so acknowledgements during a peak never meet one long stretch of it.
         */
        maxPassMs: z.coerce.number().positive().max(60_000).default(5),
        /** Field paths kept per (source, event name); sightings of later new paths are counted as truncated. */
        maxFields: z.coerce.number().int().positive().max(10_000).default(500),
        /** Nesting walked below the body's root; deeper values are summarised by their type at the cap. */
        maxDepth: z.coerce.number().int().positive().max(64).default(16),
        /** Elements of one array walked per body (all elements share the path `name[]`). */
        maxArrayElements: z.coerce.number().int().positive().default(100),
        /** (source, event name) pairs learned; events of later new pairs are not. */
        maxEventTypes: z.coerce.number().int().positive().default(200),
        /** A field present in every one of this many latest events of its type, then absent, has disappeared (a drift). */
        disappearAfter: z.coerce.number().int().positive().default(20),
        /**
         * The largest share of the event loop learning may take while it catches up (0-1): after a pass that
         * kept the loop busy for T ms it waits T × (1/share − 1) before the next, so a backlog never costs
         * acknowledgements more than this share; learning lags during a peak and catches up after it.
         */
        maxBusyShare: z.coerce.number().positive().max(1).default(0.1),
        /**
         * The same while the event loop is busy with other work (utilisation above 60 %, webhooks above all): a
         * peak's acknowledgements pay at most this share, and the backlog is learned at maxBusyShare after it.
         */
        maxBusyShareUnderLoad: z.coerce.number().positive().max(1).default(0.01),
        /** Hide personal data (e-mail addresses, wallets, names) in example values. */
        maskExamples: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    database: z
      .object({
        /**
         * postgres://user[:password]@host[:port]/db[?sslmode=verify-full&sslrootcert=/path/ca.pem]: the shared
         * PostgreSQL store for several nodes. Unset: the embedded SQLite store in dataDir.
         */
        url: z
          .string()
          .trim()
          .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// URL')
          .optional(),
        /** The password when the URL has none (PGPASSWORD); never logged. */
        password: z.string().optional(),
        /** Connections per node. */
        poolSize: z.coerce.number().int().positive().max(200).default(10),
        statementTimeoutMs: z.coerce.number().int().positive().default(30_000),
        lockTimeoutMs: z.coerce.number().int().positive().default(5_000),
        connectTimeoutMs: z.coerce.number().int().positive().default(5_000),
        /**
         * How long a webhook waits for the commit that holds its event, queueing included, before it is
         * answered 503 store_unavailable; also the deadline of the readiness probe.
         */
        commitTimeoutMs: z.coerce.number().int().positive().default(5_000),
        /** At start, how long opening the store (connecting, migrating) is tried again before the process gives up. */
        startupTimeoutMs: z.coerce.number().int().nonnegative().default(60_000),
        /** LISTEN/NOTIFY to wake idle workers at once; turn off behind a pooler in transaction mode. */
        notifications: z.boolean().default(true),
        /**
         * SQLite (no url): the most each connection's page cache holds (the receiver's, the delivery thread's).
         * Pages beyond it are read back from the operating system's file cache.
         */
        sqliteCacheSize: byteSize
          .refine((n) => n >= 64 * 1024 && n <= 1024 * 1024 * 1024, 'expected a size from 64kb to 1gb')
          .default(DEFAULT_SQLITE_CACHE_BYTES),
      })
      .strict()
      .prefault({}),
    admin: z
      .object({
        /** Bearer token of the admin API and the console log-in; generated into the data dir when unset. */
        token: z.string().trim().min(16, 'use at least 16 characters (e.g. openssl rand -hex 32)').optional(),
        /**
         * When set, the admin API, console and metrics are served on a listener of their own at
         * `admin.host:admin.port`, and the webhook listener serves webhooks and health checks only.
         */
        port: z.coerce.number().int().min(0).max(65535).optional(),
        /** Address of the admin listener: loopback unless told otherwise. */
        host: z.string().min(1).default('127.0.0.1'),
        /** The live event stream (GET /admin/api/events/stream). */
        streams: z
          .object({
            /** Open streams at once; one more is refused with 503 `too_many_streams`. */
            max: z.coerce.number().int().positive().default(100),
            /** A comment line this often keeps proxies from closing an idle stream (and re-reads the store). */
            heartbeatMs: z.coerce.number().int().positive().default(15_000),
            /** Bytes a stream may have waiting for its client before it waits for them to drain. */
            bufferBytes: z.coerce.number().int().min(1024).default(1024 * 1024),
            /** A client that has not taken a full buffer within this long is disconnected. */
            stallTimeoutMs: z.coerce.number().int().positive().default(30_000),
          })
          .strict()
          .prefault({}),
        /**
         * Failed authentications (a wrong admin token as bearer or at the console log-in, a wrong metrics
         * token) per client address in a sliding window; beyond it, 429 `too_many_attempts` until the window
         * has room. Counted per node.
         */
        authFailures: z
          .object({
            max: z.coerce.number().int().positive().default(10),
            windowMs: z.coerce.number().int().positive().default(60_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;

/** The role a node runs: `role`, where the deprecated `delivery.enabled: false` still means `receiver`. */
export function nodeRoleOf(config: Pick<Config, 'role' | 'delivery'>): Config['role'] {
  return config.delivery.enabled === false && config.role === 'all' ? 'receiver' : config.role;
}

/**
 * Every environment variable of a setting, and the setting's path in the config file (docs/operations.md
 * lists the same table; a test keeps them in step). `sources[checkout]` is the source named checkout: in the
 * file's list of sources when it has one, else the only source. HOOKRELAY_CONFIG names the file itself.
 */
export const ENV_SETTINGS = {
  HOOKRELAY_PORT: 'port',
  HOOKRELAY_HOST: 'host',
  HOOKRELAY_ADMIN_PORT: 'admin.port',
  HOOKRELAY_ADMIN_HOST: 'admin.host',
  HOOKRELAY_LOG_FORMAT: 'logFormat',
  HOOKRELAY_PUBLIC_URL: 'publicUrl',
  HOOKRELAY_DATA_DIR: 'dataDir',
  HOOKRELAY_RULES_DIR: 'rulesDir',
  HOOKRELAY_RULES_MAX_FILE_BYTES: 'rulesMaxFileBytes',
  HOOKRELAY_SECRET: 'sources[checkout].secrets',
  HOOKRELAY_ADMIN_TOKEN: 'admin.token',
  HOOKRELAY_ALLOW_NETWORKS: 'delivery.allowNetworks',
  HOOKRELAY_ROLE: 'role',
  HOOKRELAY_DATABASE_URL: 'database.url',
  PGPASSWORD: 'database.password',
  HOOKRELAY_DURABILITY: 'durability',
  HOOKRELAY_COMMIT_INTERVAL_MS: 'commitIntervalMs',
  HOOKRELAY_MAX_BODY: 'maxBody',
  HOOKRELAY_MAX_DEPTH: 'maxDepth',
  HOOKRELAY_LOG_LEVEL: 'logLevel',
  HOOKRELAY_LOG_REQUESTS: 'logRequests',
  HOOKRELAY_METRICS_TOKEN: 'metrics.token',
  HOOKRELAY_TRUST_PROXY: 'server.trustProxy',
} as const;

type Env = Record<string, string | undefined>;
type Values = Record<string, unknown>;

interface RawLayer {
  values: Values;
  /** Where each setting came from, by its dotted path (the longest known prefix names an issue), for error messages. */
  origins: Map<string, string>;
}

const isPlainObject = (value: unknown): value is Values => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNamed = (value: unknown): value is Values & { name: unknown } => isPlainObject(value) && value.name !== undefined;

/** Sets `path` (dots between keys; `key[name]` is the entry of list `key` with that name) in `target`. */
function setPath(target: Values, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  parts.forEach((part, i) => {
    const named = /^(\w+)\[([\w-]+)\]$/.exec(part);
    if (named) {
      const list = (node[named[1]!] ??= []) as Values[];
      let entry = list.find((e) => e.name === named[2]);
      if (!entry) list.push((entry = { name: named[2] }));
      node = entry;
    } else if (i === parts.length - 1) {
      node[part] = value;
    } else {
      node = (node[part] ??= {}) as Values;
    }
  });
}

function readEnvLayer(env: Env): RawLayer {
  const values: Values = {};
  const origins = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV_SETTINGS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(values, path, value);
    // An issue inside a list is named by the list (`sources`), as its entries are numbered there.
    origins.set(path.replace(/\[.*$/, ''), name);
  }
  return { values, origins };
}

/** The dotted path of every key of the file, sections included (not into lists). */
function filePaths(values: Values, prefix = ''): string[] {
  return Object.entries(values).flatMap(([key, value]) => [prefix + key, ...(isPlainObject(value) ? filePaths(value, `${prefix}${key}.`) : [])]);
}

function readFileLayer(path: string): RawLayer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new HookrelayError('invalid_config', `HOOKRELAY_CONFIG: cannot read ${path}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    throw new HookrelayError('invalid_config', `${path}: ${doc.errors[0]!.message}`);
  }
  const values = (doc.toJS() ?? {}) as unknown;
  if (!isPlainObject(values)) {
    throw new HookrelayError('invalid_config', `${path}: the config file must be a YAML mapping of settings`);
  }
  return { values, origins: new Map(filePaths(values).map((key) => [key, `${path}: ${key}`])) };
}

function describeIssuePath(path: PropertyKey[], origins: Map<string, string>): string {
  const keys = path.map(String);
  if (keys.length === 0) return 'config';
  const full = keys.join('.');
  let origin = keys[0]!;
  for (let n = keys.length; n > 0; n -= 1) {
    const known = origins.get(keys.slice(0, n).join('.'));
    if (known !== undefined) {
      origin = known;
      break;
    }
  }
  return keys.length > 1 && !origin.endsWith(full) ? `${origin} (${full})` : origin;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * A later layer wins key by key, all the way down: a file's `delivery:` keeps HOOKRELAY_ALLOW_NETWORKS. A list
 * of named entries (sources) is the later layer's list, each entry completed by the earlier layer's entry of
 * its name: a file's `checkout` source without secrets takes HOOKRELAY_SECRET's.
 */
function mergeLayers(base: unknown, layer: unknown): unknown {
  if (isPlainObject(base) && isPlainObject(layer)) {
    const merged: Values = { ...base };
    for (const [key, value] of Object.entries(layer)) merged[key] = key in base ? mergeLayers(base[key], value) : value;
    return merged;
  }
  if (Array.isArray(base) && Array.isArray(layer) && layer.every(isNamed)) {
    return layer.map((entry) => {
      const earlier = base.find((e) => isNamed(e) && e.name === entry.name);
      return earlier === undefined ? entry : mergeLayers(earlier, entry);
    });
  }
  return layer;
}

/**
 * Builds the validated, frozen configuration. Throws `invalid_config` naming the setting (environment
 * variable or file key) and what is wrong with it.
 */
export function loadConfig(env: Env, overrides: Partial<Record<keyof Config, unknown>> = {}): Readonly<Config> {
  const layers = [readEnvLayer(env), env.HOOKRELAY_CONFIG ? readFileLayer(env.HOOKRELAY_CONFIG) : undefined, { values: overrides, origins: new Map(Object.keys(overrides).map((key) => [key, key])) }];
  let merged: unknown = {};
  const origins = new Map<string, string>();
  for (const layer of layers) {
    if (!layer) continue;
    merged = mergeLayers(merged, layer.values);
    for (const [path, origin] of layer.origins) origins.set(path, origin);
  }

  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${describeIssuePath(issue.path, origins)}: ${issue.message}`);
    throw new HookrelayError('invalid_config', `Invalid configuration:\n  ${problems.join('\n  ')}`, problems);
  }
  const config = parsed.data;
  if (config.delivery.enabled === false && config.role === 'worker') {
    throw new HookrelayError('invalid_config', 'Invalid configuration:\n  delivery.enabled: false contradicts role: worker (a worker delivers); drop delivery.enabled, it is replaced by role', ['delivery.enabled']);
  }
  if (config.server.maxBufferedBytes < config.maxBody) {
    throw new HookrelayError('invalid_config', `Invalid configuration:\n  server.maxBufferedBytes (${config.server.maxBufferedBytes}) is smaller than maxBody (${config.maxBody}): no body of the largest allowed size could ever be read`, ['server.maxBufferedBytes']);
  }
  // A password (PGPASSWORD) without a PostgreSQL URL has nothing to open.
  if (config.database.url === undefined) delete config.database.password;
  config.dataDir = resolve(config.dataDir);
  config.rulesDir = resolve(config.rulesDir);
  config.contracts.dir = resolve(config.contracts.dir ?? join(dirname(config.rulesDir), 'contracts'));
  return deepFreeze(config);
}
