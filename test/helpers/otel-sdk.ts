/**
 * An OpenTelemetry SDK for a test: spans kept in memory, registered as NodeSDK registers it (a global tracer provider
 * and a context manager under which the active span follows async continuations), and taken down after.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

export function memorySdk() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    exporter,
    provider,
    register(): void {
      trace.setGlobalTracerProvider(provider);
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    },
    async unregister(): Promise<void> {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
