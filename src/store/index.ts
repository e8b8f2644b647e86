export type {
  Store,
  StoreEntry,
  StoreFence,
  StoreLease,
  StoreLockOptions,
  StoreSetOptions,
  StoreSetResult,
} from './types.js';
export { memoryStore } from './memory-store.js';
export { fileStore, type FileStoreOptions } from './file-store.js';
