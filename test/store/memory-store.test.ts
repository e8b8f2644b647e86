import { memoryStore } from '../../src/store/index.js';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('memoryStore()', async () => memoryStore());
