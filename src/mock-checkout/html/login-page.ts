import { errorLine } from './form-fields.js';
import { renderPage } from './layout.js';
import { html } from './template.js';

export function loginPage(error?: string): string {
  const content = html`<div class="card">
  <h1>Mock checkout dashboard</h1>
  <p class="muted">Enter the mock's API key (printed when it started) to manage checkouts.</p>
  <form method="post" action="/dashboard/login">
    <label for="apiKey">API key</label>
    <input id="apiKey" name="apiKey" type="password" autocomplete="current-password" required${error ? html` aria-invalid="true"` : ''}>
    ${errorLine(error)}
    <button type="submit" class="block">Log in</button>
  </form>
</div>`;
  return renderPage({ title: 'Log in · Mock checkout', content });
}
