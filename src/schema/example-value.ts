/** Longest example string kept; longer ones end with "…". */
export const MAX_EXAMPLE_CHARS = 80;

const EMAIL = /^[^\s@]+@([^\s@]+\.[^\s@]+)$/;
/** An Ethereum-style address or longer hex (wallets, transaction hashes). */
const LONG_HEX = /^0x[0-9a-fA-F]{32,}$/;
/** Field names whose values are about a person, whatever they look like. */
const PERSONAL_KEY = /(e-?mail|wallet|phone|address|name)$|^ip$/i;
/** `clientIp`, `buyerIP`: an address, where `membership` is not. */
const IP_KEY = /(Ip|IP)$/;

/**
 * The example shown for a field: strings truncated, and with masking on, personal data hidden: an e-mail
 * keeps only its domain, a wallet or long hex its first and last four digits, and any string under a
 * personal-sounding key (`email`, `walletAddress`, `phone`, `*Name`, `ip`) only its length.
 */
export function exampleValue(path: string, value: string | number | boolean | null, mask: boolean): string {
  if (typeof value !== 'string') return JSON.stringify(value);
  let shown = value;
  if (mask) {
    const email = EMAIL.exec(value);
    if (email) shown = `***@${email[1]}`;
    else if (LONG_HEX.test(value)) shown = `${value.slice(0, 6)}…${value.slice(-4)}`;
    else if (PERSONAL_KEY.test(lastKey(path)) || IP_KEY.test(lastKey(path))) shown = `*** (${value.length} characters)`;
  }
  const truncated = shown.length > MAX_EXAMPLE_CHARS ? `${shown.slice(0, MAX_EXAMPLE_CHARS - 1)}…` : shown;
  return JSON.stringify(truncated);
}

function lastKey(path: string): string {
  const match = /([A-Za-z_$][\w$-]*)(\[\])*$/.exec(path);
  return match?.[1] ?? '';
}
