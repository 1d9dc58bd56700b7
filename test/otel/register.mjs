// What an app's tracing setup file does under `node --import`, before the app loads (as NodeSDK with
// getNodeAutoInstrumentations does): a tracer provider with an in-memory exporter, the AsyncLocalStorage
// context manager, the W3C propagator, and instrumentation-http (skipped with OTEL_TEST_NO_HTTP=1).
// The spans are read by the app (./app.ts) through globalThis.__keelTestSpans.
import { createRequire } from 'node:module';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
if (process.env.OTEL_TEST_NO_HTTP !== '1') {
  new HttpInstrumentation(); // enabled on construction: hooks require('http')
  createRequire(import.meta.url)('node:http'); // patched now, before keel imports it
}
globalThis.__keelTestSpans = exporter;
