// express hello that also loads (not uses) the fixed stack's libraries, as any receiver on it would.
await Promise.all(['zod', 'yaml', 'better-sqlite3', 'pino', 'jsonata', 'sift', 'raw-body', 'p-retry'].map((m) => import(m)));
await import('./lib/baseline-server.mjs');
