const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** The log-in form: a plain HTML form posting to /console/login, so it works without scripts. */
export function loginPage(error?: string): string {
  const errorLine = error ? `\n    <p class="error" id="token-error" role="alert">${escapeHtml(error)}</p>` : '';
  const invalid = error ? ' aria-invalid="true" aria-describedby="token-error"' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Log in · hookrelay console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
</head>
<body class="login">
<main>
  <form class="card" method="post" action="/console/login">
    <h1>hookrelay console</h1>
    <p class="muted">Paste the admin token (HOOKRELAY_ADMIN_TOKEN, or the one printed on first start:
    <code>hookrelay secrets show --admin-token</code> prints it again). The browser keeps only a session cookie, never the token.</p>
    <label for="token">Admin token</label>
    <input id="token" name="token" type="password" autocomplete="current-password" required autofocus${invalid}>${errorLine}
    <button type="submit" class="block">Log in</button>
  </form>
</main>
</body>
</html>
`;
}
