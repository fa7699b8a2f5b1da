/** The fields of a valid create-checkout request (the spec's example collection), without webhook settings. */
export const SAMPLE_CHECKOUT = {
  contractAddress: '0x2bD7d2a7E6a4c4e3f1B5d8A0b7f6e5C4d3B2a1F0',
  contractChain: 'polygon',
  collectionTitle: 'Genesis Passes',
  contractType: 'ACME_NFT_DROP_V2',
  successCallbackUrl: 'https://shop.example.com/thanks',
  priceValue: 0.5,
  priceCurrency: 'MATIC',
};
