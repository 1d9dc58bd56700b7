/**
 * gRPC server reflection (https://github.com/grpc/grpc/blob/master/doc/server-reflection.md), v1 and the
 * older v1alpha that many tools still call first: lists the registered services and serves the
 * serialized FileDescriptorProtos they were loaded from, so grpcurl works without the .proto.
 */
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { GrpcStatus } from './status.js';
import type { GrpcServiceRegistry as GrpcRouter, GrpcServiceEntry } from './types.js';

export const REFLECTION_SERVICES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'] as const;

// reflection.proto (identical messages in both packages) in protobufjs JSON form.
const MESSAGES = {
  ServerReflectionRequest: {
    oneofs: { message_request: { oneof: ['file_by_filename', 'file_containing_symbol', 'file_containing_extension', 'all_extension_numbers_of_type', 'list_services'] } },
    fields: {
      host: { type: 'string', id: 1 },
      file_by_filename: { type: 'string', id: 3 },
      file_containing_symbol: { type: 'string', id: 4 },
      file_containing_extension: { type: 'ExtensionRequest', id: 5 },
      all_extension_numbers_of_type: { type: 'string', id: 6 },
      list_services: { type: 'string', id: 7 },
    },
  },
  ExtensionRequest: { fields: { containing_type: { type: 'string', id: 1 }, extension_number: { type: 'int32', id: 2 } } },
  ServerReflectionResponse: {
    oneofs: { message_response: { oneof: ['file_descriptor_response', 'all_extension_numbers_response', 'list_services_response', 'error_response'] } },
    fields: {
      valid_host: { type: 'string', id: 1 },
      original_request: { type: 'ServerReflectionRequest', id: 2 },
      file_descriptor_response: { type: 'FileDescriptorResponse', id: 4 },
      all_extension_numbers_response: { type: 'ExtensionNumberResponse', id: 5 },
      list_services_response: { type: 'ListServiceResponse', id: 6 },
      error_response: { type: 'ErrorResponse', id: 7 },
    },
  },
  FileDescriptorResponse: { fields: { file_descriptor_proto: { rule: 'repeated', type: 'bytes', id: 1 } } },
  ExtensionNumberResponse: { fields: { base_type_name: { type: 'string', id: 1 }, extension_number: { rule: 'repeated', type: 'int32', id: 2 } } },
  ListServiceResponse: { fields: { service: { rule: 'repeated', type: 'ServiceResponse', id: 1 } } },
  ServiceResponse: { fields: { name: { type: 'string', id: 1 } } },
  ErrorResponse: { fields: { error_code: { type: 'int32', id: 1 }, error_message: { type: 'string', id: 2 } } },
  ServerReflection: {
    methods: {
      ServerReflectionInfo: { requestType: 'ServerReflectionRequest', requestStream: true, responseType: 'ServerReflectionResponse', responseStream: true },
    },
  },
};

interface ReflectionRequest {
  host?: string;
  message_request?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type?: string; extension_number?: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

/** The `name` (field 1) of a serialized FileDescriptorProto. */
export function fileDescriptorName(bytes: Buffer): string | undefined {
  const r = protobuf.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) return r.string();
    r.skipType(tag & 7);
  }
  return undefined;
}

function answer(router: GrpcRouter, req: ReflectionRequest): Record<string, unknown> {
  const base = { valid_host: req.host ?? '', original_request: req };
  const notFound = (what: string) => ({ ...base, error_response: { error_code: GrpcStatus.NOT_FOUND, error_message: `${what} not found` } });
  const files = (entry: GrpcServiceEntry | undefined) => entry && { ...base, file_descriptor_response: { file_descriptor_proto: entry.fileDescriptorProtos } };
  switch (req.message_request) {
    case 'list_services':
      return { ...base, list_services_response: { service: router.services().map((s) => ({ name: s.name })) } };
    case 'file_containing_symbol': {
      const symbol = (req.file_containing_symbol ?? '').replace(/^\./, '');
      // A symbol may name a nested member (`pkg.Service.Method`, `pkg.Message.field`): try its prefixes too.
      const parts = symbol.split('.');
      for (let n = parts.length; n > 0; n--) {
        const prefix = parts.slice(0, n).join('.');
        const hit = router.services().find((s) => s.symbols.has(prefix));
        if (hit) return files(hit)!;
      }
      return notFound(`Symbol ${symbol}`);
    }
    case 'file_by_filename': {
      const name = req.file_by_filename ?? '';
      for (const s of router.services()) {
        const file = s.fileDescriptorProtos.find((b) => fileDescriptorName(b) === name);
        // Send the whole set the file was loaded with, so its imports resolve too.
        if (file) return { ...base, file_descriptor_response: { file_descriptor_proto: [file, ...s.fileDescriptorProtos.filter((b) => b !== file)] } };
      }
      return notFound(`File ${name}`);
    }
    case 'file_containing_extension':
      return notFound(`Extension ${req.file_containing_extension?.extension_number ?? ''} of ${req.file_containing_extension?.containing_type ?? ''}`);
    case 'all_extension_numbers_of_type':
      // keel's services declare no extensions (proto3); the type is known when it is registered.
      return router.services().some((s) => s.symbols.has(req.all_extension_numbers_of_type ?? ''))
        ? { ...base, all_extension_numbers_response: { base_type_name: req.all_extension_numbers_of_type, extension_number: [] } }
        : notFound(`Type ${req.all_extension_numbers_of_type}`);
    default:
      return { ...base, error_response: { error_code: GrpcStatus.INVALID_ARGUMENT, error_message: 'empty reflection request' } };
  }
}

/** Register both reflection services on `router`. */
export function installReflection(router: GrpcRouter): void {
  for (const full of REFLECTION_SERVICES) {
    const [, , version] = full.split('.');
    const json = { nested: { grpc: { nested: { reflection: { nested: { [version!]: { nested: MESSAGES } } } } } } };
    const pkg = protoLoader.fromJSON(json as never, { keepCase: true, oneofs: true });
    router.addService(pkg, full, {
      ServerReflectionInfo: async function* reflect(requests: AsyncIterable<ReflectionRequest>) {
        for await (const req of requests) yield answer(router, req);
      },
    });
  }
}
