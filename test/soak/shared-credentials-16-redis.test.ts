// Sixteen processes share one credential on Redis (fleet-test.ts).
import { describe } from 'vitest';
import { itSharesOneCredential } from './fleet-test.js';

describe('shared credentials across 16 processes', () => {
  itSharesOneCredential('redis', 16);
});
