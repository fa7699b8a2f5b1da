import type { CheckoutRecord, TransferRecord } from '../records.js';
import { PAYMENT_METHODS } from '../schemas.js';
import { totalPriceUsd } from '../transfer-builder.js';
import { errorLine, inputField, type FieldErrors } from './form-fields.js';
import { renderPage } from './layout.js';
import { html } from './template.js';

export interface BuyerFormValues {
  email: string;
  walletAddress: string;
  quantity: string;
  paymentMethod: string;
}

export const EMPTY_BUYER_FORM: BuyerFormValues = { email: '', walletAddress: '', quantity: '1', paymentMethod: 'BUY_WITH_CARD' };

const PAYMENT_LABELS: Record<(typeof PAYMENT_METHODS)[number], string> = {
  BUY_WITH_CARD: 'Card',
  BUY_WITH_CRYPTO: 'Crypto wallet',
};

function formatPrice(checkout: CheckoutRecord): string {
  return `${checkout.priceValue} ${checkout.priceCurrency}`;
}

export function buyerFormPage(checkout: CheckoutRecord, values: BuyerFormValues, errors: FieldErrors = {}): string {
  const options = PAYMENT_METHODS.map(
    (method) => html`<option value="${method}"${values.paymentMethod === method ? html` selected` : ''}>${PAYMENT_LABELS[method]}</option>`,
  );
  const content = html`<div class="card">
  <div class="muted">Checkout${checkout.contractChain ? html` · ${checkout.contractChain}` : ''}</div>
  <h1>${checkout.collectionTitle}</h1>
  <div class="price" data-testid="price">${formatPrice(checkout)}</div>
  <div class="muted">per token · about ${totalPriceUsd(checkout, 1)} USD including network fee</div>
  ${errors.form ? html`<div class="banner warn" role="alert">${errors.form}</div>` : ''}
  <form method="post" action="/checkout/${checkout.id}" novalidate>
    ${inputField({ name: 'email', label: 'E-mail', type: 'email', value: values.email, errors, required: true, attributes: html`autocomplete="email" placeholder="you@example.com"` })}
    ${inputField({ name: 'walletAddress', label: 'Wallet address (optional)', value: values.walletAddress, errors, hint: 'Leave empty to receive the tokens in a new embedded wallet.', attributes: html`placeholder="0x…" spellcheck="false"` })}
    <div class="row">
      <div>${inputField({ name: 'quantity', label: 'Quantity', type: 'number', value: values.quantity, errors, attributes: html`min="1" max="100" step="1"` })}</div>
      <div>
        <label for="paymentMethod">Payment method</label>
        <select id="paymentMethod" name="paymentMethod">${options}</select>
        ${errorLine(errors.paymentMethod)}
      </div>
    </div>
    <button type="submit" class="block">Buy</button>
  </form>
</div>
<p class="muted">Mock checkout for testing: no real payment is taken.</p>`;
  return renderPage({ title: `${checkout.collectionTitle} · Checkout`, content });
}

export function purchaseSuccessPage(checkout: CheckoutRecord, transfer: TransferRecord): string {
  const content = html`<div class="card">
  <div class="banner">Payment complete</div>
  <h1>Thank you for your purchase</h1>
  <p>${transfer.quantity} × ${checkout.collectionTitle} sent to your wallet.</p>
  <dl>
    <dt>Transfer id</dt><dd class="mono" data-testid="transfer-id">${transfer.id}</dd>
    <dt>Wallet</dt><dd><span class="mono">${transfer.walletAddress}</span> <span class="muted">${transfer.walletType.toLowerCase()} wallet</span></dd>
    <dt>Tokens</dt><dd>${transfer.claimedTokens.tokenIds.join(', ')}</dd>
    <dt>Total</dt><dd>${transfer.totalPriceUsd} USD</dd>
  </dl>
  ${checkout.successCallbackUrl ? html`<a class="button" href="${checkout.successCallbackUrl}" rel="noreferrer">Continue</a>` : ''}
</div>`;
  return renderPage({ title: 'Purchase complete', content });
}

/** Friendly pages for buyer-facing and dashboard errors (404 unknown or deleted checkout, 410 used link, …). */
export function errorPage(error: { status: number; code: string; message: string; aboutCheckout: boolean }): string {
  const { status, code, message, aboutCheckout } = error;
  const title =
    code === 'gone' ? 'This checkout link was already used'
    : code === 'not_found' ? (aboutCheckout ? 'Checkout not found' : 'Page not found')
    : status >= 500 ? 'Something went wrong'
    : 'Request not accepted';
  const explanation =
    code === 'gone' ? 'This was a one-time checkout link and a purchase has already been completed with it. Ask the seller for a new link.'
    : code === 'not_found' && aboutCheckout ? 'This checkout does not exist or has been deleted.'
    : message;
  const content = html`<div class="card">
  <div class="muted">Error ${status}</div>
  <h1>${title}</h1>
  <p>${explanation}</p>
</div>`;
  return renderPage({ title, content });
}
