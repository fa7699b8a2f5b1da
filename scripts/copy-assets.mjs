// Copies non-TypeScript runtime assets (SQL migrations, HTML/CSS/JS of the web pages) from src/ to dist/.
import { cpSync, readdirSync, statSync } from 'node:fs';
import { join, relative, extname } from 'node:path';

const ASSET_EXTENSIONS = new Set(['.sql', '.html', '.css', '.js', '.svg', '.png', '.ico']);
const srcRoot = new URL('../src/', import.meta.url).pathname;
const distRoot = new URL('../dist/', import.meta.url).pathname;

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (ASSET_EXTENSIONS.has(extname(name))) cpSync(path, join(distRoot, relative(srcRoot, path)));
  }
}
walk(srcRoot);
