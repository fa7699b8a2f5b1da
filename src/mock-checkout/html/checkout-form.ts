import { SERVICE_SIGNATURE_HEADER } from '../../signing/scheme.js';
import type { CheckoutRecord } from '../records.js';
import { formText, inputField, errorLine, type FieldErrors } from './form-fields.js';
import { html, type SafeHtml } from './template.js';

/** The dashboard's checkout form as the browser sends it: every field a string. */
export interface CheckoutFormValues {
  collectionTitle: string;
  contractAddress: string;
  contractChain: string;
  contractType: string;
  priceValue: string;
  priceCurrency: string;
  successCallbackUrl: string;
  webhookUrls: string;
  webhookSecret: string;
}

const FIELDS: (keyof CheckoutFormValues)[] = [
  'collectionTitle', 'contractAddress', 'contractChain', 'contractType', 'priceValue',
  'priceCurrency', 'successCallbackUrl', 'webhookUrls', 'webhookSecret',
];

export const NEW_CHECKOUT_FORM: CheckoutFormValues = {
  collectionTitle: '',
  contractAddress: '',
  contractChain: 'polygon',
  contractType: '',
  priceValue: '',
  priceCurrency: 'MATIC',
  successCallbackUrl: '',
  webhookUrls: '',
  webhookSecret: '',
};

export function readCheckoutForm(body: unknown): CheckoutFormValues {
  return Object.fromEntries(FIELDS.map((name) => [name, formText(body, name)])) as unknown as CheckoutFormValues;
}

export function formValuesOf(checkout: CheckoutRecord): CheckoutFormValues {
  return {
    collectionTitle: checkout.collectionTitle,
    contractAddress: checkout.contractAddress,
    contractChain: checkout.contractChain ?? '',
    contractType: checkout.contractType ?? '',
    priceValue: String(checkout.priceValue),
    priceCurrency: checkout.priceCurrency,
    successCallbackUrl: checkout.successCallbackUrl ?? '',
    webhookUrls: checkout.webhookUrls.join('\n'),
    webhookSecret: checkout.webhookSecret,
  };
}

/**
 * The API body the form stands for. Required fields stay '' so validation names them; empty optional
 * fields are left out on create and cleared (null) on edit; an empty secret keeps or generates one.
 */
export function checkoutInputFromForm(values: CheckoutFormValues, mode: 'create' | 'edit'): Record<string, unknown> {
  const optional = (value: string) => (value === '' ? (mode === 'edit' ? null : undefined) : value);
  return {
    collectionTitle: values.collectionTitle,
    contractAddress: values.contractAddress,
    contractChain: optional(values.contractChain),
    contractType: optional(values.contractType),
    priceValue: values.priceValue === '' ? undefined : Number(values.priceValue),
    priceCurrency: values.priceCurrency,
    successCallbackUrl: optional(values.successCallbackUrl),
    webhookUrls: values.webhookUrls.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== ''),
    webhookSecret: values.webhookSecret === '' ? undefined : values.webhookSecret,
  };
}

export function checkoutFormFields(values: CheckoutFormValues, errors: FieldErrors, options: { oneTimeNote: SafeHtml }): SafeHtml {
  const field = (name: keyof CheckoutFormValues, label: string, extra: Partial<Parameters<typeof inputField>[0]> = {}) =>
    inputField({ name, label, value: values[name], errors, ...extra });
  return html`${errors.form ? html`<div class="banner warn" role="alert">${errors.form}</div>` : ''}
${field('collectionTitle', 'Collection title', { required: true })}
${field('contractAddress', 'Contract address', { required: true, attributes: html`placeholder="0x…" spellcheck="false"` })}
<div class="row">
  <div>${field('contractChain', 'Chain', { hint: 'e.g. polygon' })}</div>
  <div>${field('contractType', 'Contract type', { hint: 'UPPER_SNAKE_CASE, e.g. ACME_NFT_DROP_V2' })}</div>
</div>
<div class="row">
  <div>${field('priceValue', 'Price', { required: true, attributes: html`inputmode="decimal"` })}</div>
  <div>${field('priceCurrency', 'Currency', { required: true })}</div>
</div>
${field('successCallbackUrl', 'Success callback URL', { type: 'url', hint: 'Where the buyer goes after paying.' })}
<details open>
  <summary>Advanced Options</summary>
  <label for="webhookUrls">Webhook URLs</label>
  <textarea id="webhookUrls" name="webhookUrls" spellcheck="false" placeholder="http://127.0.0.1:8080/webhooks/checkout"${errors.webhookUrls ? html` aria-invalid="true"` : ''}>${values.webhookUrls}</textarea>
  <div class="hint">One URL per line. Each gets a signed <code>transfer:succeeded</code> POST when a purchase completes.</div>
  ${errorLine(errors.webhookUrls)}
  ${field('webhookSecret', 'Webhook secret', { hint: `Key of the ${SERVICE_SIGNATURE_HEADER} HMAC. Leave empty to keep the current one (or generate one).`, attributes: html`spellcheck="false" autocomplete="off"` })}
  <div class="hint" style="margin-top:12px">${options.oneTimeNote}</div>
</details>`;
}
