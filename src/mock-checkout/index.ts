export { createMockCheckout, DEFAULT_RETRY, type MockCheckout, type MockCheckoutOptions } from './create-mock-checkout.js';
export { registerMockCheckoutCommand, API_KEY_ENV, type MockCheckoutCommandIO } from './command.js';
export type { MockCheckoutServer } from './listen.js';
export type { CheckoutRecord, DeliveryRecord, TransferRecord, SignatureMode } from './records.js';
export type { MockRepository } from './store/repository.js';
export type { FetchLike, RetryPolicy } from './webhook-sender.js';
