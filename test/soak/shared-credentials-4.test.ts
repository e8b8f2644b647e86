// Four processes share one credential, on the file store and on Redis (fleet-test.ts).
import { describe } from 'vitest';
import { itSharesOneCredential } from './fleet-test.js';

describe('shared credentials across 4 processes', () => {
  itSharesOneCredential('file', 4);
  itSharesOneCredential('redis', 4);
});
