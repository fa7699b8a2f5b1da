/**
 * Stored bodies and the amount (`result.totalPriceUsd`) a migration must take from each: the usual ones,
 * and the ones that must leave it empty without failing the migration. PostgreSQL reads two fewer: a \u0000
 * escape, and invalid UTF-8 (an import may hold it: import reads the body replacing the bad bytes, as SQLite does).
 */
export const AMOUNT_BODIES: readonly { transferId: string; body: Buffer; amount: number | null; postgresAmount?: number | null }[] = [
  { transferId: 'a-decimal', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-decimal","totalPriceUsd":104.37}}'), amount: 104.37 },
  { transferId: 'a-integer', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-integer","totalPriceUsd":20}}'), amount: 20 },
  { transferId: 'a-zero', body: Buffer.from('{"event":"transfer:succeeded","result":{"totalPriceUsd":0,"id":"a-zero"}}'), amount: 0 },
  { transferId: 'a-none', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-none"}}'), amount: null },
  { transferId: 'a-string', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-string","totalPriceUsd":"12.00"}}'), amount: null },
  { transferId: 'a-top-level', body: Buffer.from('{"event":"x","totalPriceUsd":5,"result":{"id":"a-top-level"}}'), amount: null },
  { transferId: 'a-huge', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-huge","totalPriceUsd":1e400}}'), amount: null },
  // PostgreSQL's JSON types refuse a \u0000 escape anywhere in the text: that body keeps no amount there.
  { transferId: 'a-nul', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-nul","note":"\\u0000","totalPriceUsd":7}}'), amount: 7, postgresAmount: null },
  { transferId: 'a-not-json', body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"a-not-json","totalPriceUsd":3'), amount: null },
  { transferId: 'a-not-utf8', body: Buffer.concat([Buffer.from('{"result":{"totalPriceUsd":9,"x":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]), amount: 9, postgresAmount: null },
];
