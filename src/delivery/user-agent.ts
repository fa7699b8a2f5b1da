import { createRequire } from 'node:module';

// package.json sits two levels up from both src/delivery and dist/delivery.
const manifest = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Sent on every delivery so receivers can recognise (and allowlist) us. */
export const USER_AGENT = `hookrelay/${manifest.version}`;
