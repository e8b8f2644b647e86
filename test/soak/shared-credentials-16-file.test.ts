// Sixteen processes share one credential on the file store (fleet-test.ts).
import { describe } from 'vitest';
import { itSharesOneCredential } from './fleet-test.js';

describe('shared credentials across 16 processes', () => {
  itSharesOneCredential('file', 16);
});
