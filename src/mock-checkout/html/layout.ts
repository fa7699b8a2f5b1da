import { SafeHtml, html } from './template.js';

// Small, self-contained styling: no CDN, no web fonts, so the pages work offline.
const STYLE = `
*{box-sizing:border-box}
a{color:#3949ab}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f3f5f9}
main{max-width:560px;margin:40px auto;padding:0 16px}
main.wide{max-width:1040px}
.card{background:#fff;border:1px solid #dde2ea;border-radius:12px;padding:24px 28px;margin-bottom:20px;box-shadow:0 1px 3px rgba(20,30,50,.06)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 12px}
.muted{color:#66708a;font-size:13px}
.price{font-size:28px;font-weight:650;margin:12px 0 4px}
label{display:block;font-weight:600;margin:14px 0 4px}
input,select,textarea{width:100%;padding:9px 11px;border:1px solid #c4cbd8;border-radius:8px;font:inherit;background:#fff}
textarea{min-height:84px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
input[aria-invalid=true],textarea[aria-invalid=true]{border-color:#c62828}
.error{color:#c62828;font-size:13px;margin-top:3px}
.hint{color:#66708a;font-size:12px;margin-top:3px}
button,.button{display:inline-block;margin-top:18px;padding:10px 18px;border:0;border-radius:8px;background:#3949ab;color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#e8eaf6;color:#283593}
button.danger{background:#c62828}
button.block{width:100%}
.inline{display:inline}
.banner{padding:10px 14px;border-radius:8px;margin-bottom:16px;background:#e8f5e9;color:#1b5e20}
.banner.warn{background:#fff3e0;color:#8a4b00}
table{width:100%;border-collapse:collapse;font-size:14px}
th,td{text-align:left;padding:8px 6px;border-bottom:1px solid #e6e9ef;vertical-align:top}
th{color:#66708a;font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;word-break:break-all}
.status-ok{color:#1b5e20;font-weight:600}.status-bad{color:#c62828;font-weight:600}
details{margin-top:18px;border-top:1px solid #e6e9ef;padding-top:12px}
summary{cursor:pointer;font-weight:600}
header.bar{display:flex;justify-content:space-between;align-items:center;margin-bottom:16px}
header.bar form{margin:0}header.bar button{margin:0}
.row{display:flex;gap:12px}.row>div{flex:1}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:12px 0 0;font-size:14px}dt{color:#66708a}dd{margin:0}
`;

export interface PageOptions {
  title: string;
  content: SafeHtml;
  wide?: boolean;
}

export function renderPage({ title, content, wide = false }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body>
<main class="${wide ? 'wide' : ''}">
${content}
</main>
</body>
</html>`.value;
}
