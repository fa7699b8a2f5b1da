import type { CheckoutRecord, DeliveryRecord } from '../records.js';
import { checkoutFormFields, type CheckoutFormValues } from './checkout-form.js';
import type { FieldErrors } from './form-fields.js';
import { renderPage } from './layout.js';
import { html, type SafeHtml } from './template.js';

/** Fixed flash messages chosen by a `notice` query parameter, so no request text is reflected into pages. */
const NOTICES: Record<string, { text: string; warn?: boolean }> = {
  created: { text: 'Checkout created.' },
  saved: { text: 'Changes saved.' },
  deleted: { text: 'Checkout deleted.' },
  'test-sent': { text: 'Test webhook sent: see the deliveries below.' },
  'no-webhooks': { text: 'This checkout has no webhook URLs. Add some under Advanced Options.', warn: true },
};

function noticeBanner(notice: string | undefined): SafeHtml {
  const found = notice ? NOTICES[notice] : undefined;
  return found ? html`<div class="banner${found.warn ? ' warn' : ''}" role="status">${found.text}</div>` : html``;
}

function dashboardPage(title: string, content: SafeHtml): string {
  const page = html`<header class="bar">
  <div><a href="/dashboard"><strong>Mock checkout</strong></a> <span class="muted">dashboard</span></div>
  <form method="post" action="/dashboard/logout"><button type="submit" class="secondary">Log out</button></form>
</header>
${content}`;
  return renderPage({ title: `${title} · Mock checkout`, content: page, wide: true });
}

export function checkoutListPage(checkouts: CheckoutRecord[], nextCursor: string | null, notice?: string): string {
  const rows = checkouts.map(
    (c) => html`<tr>
  <td><a href="/dashboard/checkouts/${c.id}">${c.collectionTitle}</a><div class="muted mono">${c.id}</div></td>
  <td>${c.priceValue} ${c.priceCurrency}</td>
  <td>${c.contractChain ?? '—'}</td>
  <td>${c.webhookUrls.length}</td>
  <td>${c.oneTimeLink ? 'yes' : 'no'}</td>
  <td class="muted">${c.createdAt}</td>
  <td><a href="/checkout/${c.id}">Buyer page</a></td>
</tr>`,
  );
  const content = html`${noticeBanner(notice)}
<div class="card">
  <header class="bar"><h1>Checkouts</h1><a class="button" href="/dashboard/checkouts/new" style="margin:0">New checkout</a></header>
  ${checkouts.length === 0
    ? html`<p class="muted">No checkouts yet. Create one here or with <code>POST /api/v1/checkout</code>.</p>`
    : html`<table>
    <thead><tr><th>Collection</th><th>Price</th><th>Chain</th><th>Webhooks</th><th>One-time</th><th>Created</th><th></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`}
  ${nextCursor ? html`<a class="button secondary" href="/dashboard?cursor=${encodeURIComponent(nextCursor)}">Older checkouts</a>` : ''}
</div>`;
  return dashboardPage('Checkouts', content);
}

export function newCheckoutPage(values: CheckoutFormValues, errors: FieldErrors = {}): string {
  const content = html`<div class="card">
  <h1>New checkout</h1>
  <form method="post" action="/dashboard/checkouts" novalidate>
    ${checkoutFormFields(values, errors, { oneTimeNote: html`One-time links can only be set through the API (<code>oneTimeLink: true</code>).` })}
    <button type="submit">Create checkout</button>
  </form>
</div>`;
  return dashboardPage('New checkout', content);
}

export interface CheckoutDetailView {
  checkout: CheckoutRecord;
  buyerUrl: string;
  transferCount: number;
  deliveries: DeliveryRecord[];
  values: CheckoutFormValues;
  errors?: FieldErrors;
  notice?: string | undefined;
}

export function checkoutDetailPage(view: CheckoutDetailView): string {
  const { checkout, buyerUrl, transferCount, deliveries, values, errors = {} } = view;
  const oneTime = checkout.oneTimeLink
    ? html`One-time link (set through the API): <strong>${transferCount > 0 ? 'used' : 'not used yet'}</strong>.`
    : html`One-time links can only be set through the API (<code>oneTimeLink: true</code>).`;
  const content = html`${noticeBanner(view.notice)}
<div class="card">
  <h1>${checkout.collectionTitle}</h1>
  <dl>
    <dt>Buyer link</dt><dd><a class="mono" href="${buyerUrl}">${buyerUrl}</a></dd>
    <dt>Checkout id</dt><dd class="mono">${checkout.id}</dd>
    <dt>Created</dt><dd>${checkout.createdAt}</dd>
    <dt>Purchases</dt><dd>${transferCount}</dd>
  </dl>
</div>
<div class="card">
  <h2>Edit checkout</h2>
  <form method="post" action="/dashboard/checkouts/${checkout.id}" novalidate>
    ${checkoutFormFields(values, errors, { oneTimeNote: oneTime })}
    <button type="submit">Save changes</button>
  </form>
</div>
<div class="card">
  <header class="bar"><h2>Webhook deliveries</h2>
    <form method="post" action="/dashboard/checkouts/${checkout.id}/test-webhook"><button type="submit" class="secondary">Send test webhook</button></form>
  </header>
  ${deliveryTable(deliveries)}
</div>
<div class="card">
  <h2>Delete checkout</h2>
  <p class="muted">The buyer link stops working; its purchases and deliveries are removed.</p>
  <form method="post" action="/dashboard/checkouts/${checkout.id}/delete"><button type="submit" class="danger">Delete checkout</button></form>
</div>`;
  return dashboardPage(checkout.collectionTitle, content);
}

function deliveryTable(deliveries: DeliveryRecord[]): SafeHtml {
  if (deliveries.length === 0) return html`<p class="muted">No deliveries yet.</p>`;
  const newestFirst = [...deliveries].reverse();
  const rows = newestFirst.map(
    (d) => html`<tr data-testid="delivery-row">
  <td class="muted">${d.at}</td>
  <td>${d.kind}</td>
  <td class="mono">${d.url}</td>
  <td class="${d.ok ? 'status-ok' : 'status-bad'}">${d.status ?? '—'}</td>
  <td>${d.attempts}</td>
  <td>${d.error ?? ''}${d.signature !== 'valid' ? html` <span class="muted">(${d.signature} signature)</span>` : ''}</td>
</tr>`,
  );
  return html`<table>
  <thead><tr><th>At</th><th>Kind</th><th>URL</th><th>Status</th><th>Attempts</th><th>Error</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`;
}
