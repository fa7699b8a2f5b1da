import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every migration file shipped, with the sha256 of its bytes, per backend. A released migration never
 * changes: a database that has run it would not run it again, so a fix goes in a new, higher-numbered
 * file. Adding a file means adding its line here (the failure message prints it).
 */
const RELEASED: Record<string, Record<string, string>> = {
  'src/store/sqlite/migrations': {
    '001_events.sql': '2a6d4160bf1354f79956f2fa83bf12007290331a583c1a4bc99782878c09993d',
    '002_deliveries.sql': 'b3914506407a6081b275d706175e14bcd87a554eda9ee639be2a2a7c66d843d6',
    '003_admin.sql': 'a1338dd248822b1fe9393e0505adcd3178b2136ea594218881b9c86f514fe032',
    '004_rare_value_indexes.sql': '8eb47bab96957aba72b3e559605442640460b2e6b3e29acdcd2418c9b2a8f996',
    '005_imported_at.sql': '9e687d303fca604e7c58211b8614600035b62e1db2b7406bc0b74bfe3c82db4d',
    '006_unsettled_delivery_indexes.sql': '717b41f4542f607a00df5aebb5ab14ba881059a028ee2f33446d885be8a65ff6',
    '007_transfer_id.sql': '6a620f8f2f3a156d4779cbe76cecc49f6d416ad57853aaf7c8f5151dd9be39f7',
    '008_rule_sets_and_edited_copies.sql': '08b0ed379035f3bd0ca5a7c909a2925ec6e774a4ddb9c5c7677a8eb720574c1a',
    '009_attempt_outcome_states.sql': '3049019f3700d191e8bdc8377c348e87419b4ad185534f6fdfbad9002febb547',
    '010_nodes_and_leases.sql': 'ad395a06d33c573856d918a674648e582b1c09f1f3af3e1c5382b838f0f1cc70',
    '011_settings_and_console_sessions.sql': 'b2a4823fae4ad3aa7359dd19481358f77d93bdd7db0119dc4dca1cd628fad271',
    '012_ordered_delivery.sql': '70255af9ce3d78fb29d37ea8000c65c5ffea45f7913df2c14a875ef43c5cef8a',
    '013_outages_and_redrives.sql': '1bec236d72226563f15891e662a6e8510e15b8efc4db2ebcec9a0adeae8be17e',
    '014_total_price_usd.sql': '6ef018d448f8d7d3c983b633ed33f639d59661d38fed8712c89e3f62d3cc1f17',
    '015_quarantine.sql': 'b58410c217ba37ba27ebcfcf3837187a3cb95eec81f4b3ad911442932bbe0772',
    '016_observed_schemas.sql': 'a0d0ca112b5291406811ca33ac838ae24a1fbe7b56524bd5fde3d95f7d2ff2fc',
    '017_seen_keys.sql': 'cef19c50d0af04ab046ada21867a8759875f41d4faddf8b34922e518fa07821f',
    '018_lazy_seen_keys_and_id_floor.sql': 'e17196d5984a7a20352a94145bf03e1a8ae4bb574818b95862459c48088b620a',
  },
  'src/store/postgres/migrations': {
    '001_initial.sql': '2dead96fb43eb77cc42eda0cc6aac23887911b0c6f1489b0544747cede5499aa',
    '002_rule_sets_and_edited_copies.sql': '7abc2ae2eb317dd1807b1c7b2a0ae93e73fd3f55ae114857ea7742bac029054f',
    '003_event_commit_order.sql': '8f3e61f9cfd1c5914afd53560b1723e355c8d845206c6f9fbabc0041d2d584aa',
    '004_nodes_and_leases.sql': 'f705e0013a48ab18c8eabe47591bb88ecd6c38e9797779358b4cc19fde1f08e4',
    '005_settings_and_console_sessions.sql': '86c64148edaf10cf1c1dfad2797046ebb3be6803095a1a026a8cc04ebb862617',
    '006_ordered_delivery.sql': 'b7ac5528a736e64c180e4ae8a1bf97581d62f380490d324cf8f6b234869fd78a',
    '007_outages_and_redrives.sql': '101b174f05310600d3ee134146c65d6950e096a9cc22e6adb1d5b83806d6ea93',
    '008_total_price_usd.sql': '76b936b9a91bbea4d699116ee0b34406ddc476a45576dcb06e9961494c0943a0',
    '009_node_url.sql': 'd86d6815b97c6f5d533718b5bd30cfad174dce76c3b200bdd5739b1755bcb821',
    '010_quarantine.sql': '5a5668cadb4a9b4de3e14a3b63091154c2cfa53aa009696ff3694d2b13da004d',
    '011_observed_schemas.sql': '3d8fea2633ec0b4879da002523127a18f93f2f7e2aa988154b2b3543678a433a',
    '012_seen_keys.sql': 'ba706d420c66ed473a50d40ae614f23ad2adc864ffba084a4d3af86788a9ee85',
    '013_time_partitions.sql': '40c8456ca04463cc268aa29ed37a250af46dd31c577eb383818a245b690a91b3',
  },
};

const STORE_DIR = 'src/store';

/** Every `migrations` folder of a backend under src/store/ that exists in this tree. */
function migrationFolders(): string[] {
  return readdirSync(STORE_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(STORE_DIR, entry.name, 'migrations')))
    .map((entry) => `${STORE_DIR}/${entry.name}/migrations`)
    .sort();
}

function checksums(folder: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(folder)
      .sort()
      .map((file) => [file, createHash('sha256').update(readFileSync(join(folder, file))).digest('hex')]),
  );
}

describe('shipped migrations are append-only', () => {
  it('every backend with a migrations folder has its recorded list', () => {
    expect(migrationFolders()).toContain('src/store/sqlite/migrations');
    for (const folder of migrationFolders()) {
      expect(RELEASED[folder], `no recorded list for ${folder}: add\n'${folder}': ${JSON.stringify(checksums(folder), null, 2)}`).toBeDefined();
    }
  });

  it.each(Object.keys(RELEASED))('%s: no released file changed, none removed, every new file recorded', (folder) => {
    expect(checksums(folder)).toEqual(RELEASED[folder]);
  });

  it.each(Object.keys(RELEASED))('%s: one file per version number', (folder) => {
    const versions = Object.keys(RELEASED[folder]!).map((file) => file.slice(0, file.indexOf('_')));
    expect(new Set(versions).size).toBe(versions.length);
  });
});
