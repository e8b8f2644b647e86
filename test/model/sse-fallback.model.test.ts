import { sseFallbackMachine } from '../../machines/sse-fallback.machine.js';
import { sseFallbackSpec } from './sse-fallback.spec.js';
import { modelSuite } from './suite.js';

modelSuite('sse-fallback', sseFallbackSpec(sseFallbackMachine));
