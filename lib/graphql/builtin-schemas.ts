/**
 * The built-in test schemas a route can serve by name (spec: schema_type `query_only`,
 * `query_mutation`, `full`). Each call builds a fresh schema with its own in-memory library of
 * books, so two routes never share state. Documented in docs/graphql.md.
 */
import { GraphQLError, buildSchema, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { AppError } from '../http/errors.js';
import { MemoryPubSub, type PubSub } from './pubsub.js';

/** The accepted `schema_type` names. */
export const SCHEMA_TYPES = ['query_only', 'query_mutation', 'full'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

const QUERY_SDL = /* GraphQL */ `
"A book in the in-memory library."
type Book {
  id: ID!
  title: String!
  author: Author!
}

"An author; books link back, so queries can nest arbitrarily deep (useful for depth limits)."
type Author {
  id: ID!
  name: String!
  books(first: Int): [Book!]!
}

type Query {
  "Greets name (default: World)."
  hello(name: String): String!
  "Returns message unchanged."
  echo(message: String!): String!
  book(id: ID!): Book
  "The first n books (all when first is omitted)."
  books(first: Int): [Book!]!
  authors(first: Int): [Author!]!
}
`;

const MUTATION_SDL = /* GraphQL */ `
input BookInput {
  title: String!
  authorId: ID!
}

type Mutation {
  "Adds a book; fails with NOT_FOUND when the author does not exist."
  addBook(input: BookInput!): Book!
  "Removes a book; true when it existed."
  deleteBook(id: ID!): Boolean!
}
`;

const SUBSCRIPTION_SDL = /* GraphQL */ `
type Subscription {
  "Counts down from 'from' (default 3) to 0, one event per number, then completes."
  countdown(from: Int = 3): Int!
  "A Book each time addBook succeeds on this schema."
  bookAdded: Book!
}
`;

interface BookRow { id: string; title: string; authorId: string }
interface AuthorRow { id: string; name: string }

/** Largest `from` accepted by countdown, so a client cannot hold a subscription open for ever. */
export const MAX_COUNTDOWN = 100;

function take<T>(rows: T[], first: unknown): T[] {
  return typeof first === 'number' && first >= 0 ? rows.slice(0, first) : rows;
}

/**
 * Books one built-in library holds at most: 1000. Past it `addBook` drops the oldest book. Before (issue 44) every
 * added book was kept: 900 KB titles at 40 requests/s from one address grew the server by 37 MB/s until it crashed.
 */
export const DEFAULT_BUILTIN_MAX_BOOKS = 1000;
/**
 * Bytes of titles (UTF-8) one built-in library holds at most: 4 MiB. Past it `addBook` drops the oldest books; a
 * title longer than this on its own is refused with BAD_USER_INPUT.
 */
export const DEFAULT_BUILTIN_MAX_LIBRARY_BYTES = 4 * 1024 * 1024;

/** The PubSub topic of `bookAdded`: the added book is published on it. */
export const BOOK_ADDED_TOPIC = 'bookAdded';

export interface BuiltinSchemaOptions {
  /** Where `addBook` publishes and `bookAdded` subscribes. Default: a new MemoryPubSub (this schema only). */
  pubsub?: PubSub;
  /**
   * The topic of `bookAdded`. Default {@link BOOK_ADDED_TOPIC}; a route on the App's shared pub/sub
   * uses `graphql:<path>:bookAdded`, so two routes (and only the same route on other instances) share events.
   */
  topic?: string;
  /** Books the library keeps; the oldest is dropped past it. Default {@link DEFAULT_BUILTIN_MAX_BOOKS}. */
  maxBooks?: number;
  /** UTF-8 bytes of titles the library keeps; the oldest books are dropped past it. Default {@link DEFAULT_BUILTIN_MAX_LIBRARY_BYTES}. */
  maxLibraryBytes?: number;
}

/**
 * Build the built-in schema `type`. Throws AppError GraphQl for any other name.
 *
 * @example
 * const schema = builtinSchema('full');
 */
export function builtinSchema(type: string, options: BuiltinSchemaOptions = {}): GraphQLSchema {
  if (!(SCHEMA_TYPES as readonly string[]).includes(type)) {
    throw new AppError('GraphQl', `Unknown schema_type ${JSON.stringify(type)}; expected one of ${SCHEMA_TYPES.join(', ')}`);
  }
  const withMutation = type !== 'query_only';
  const withSubscription = type === 'full';
  const sdl = QUERY_SDL + (withMutation ? MUTATION_SDL : '') + (withSubscription ? SUBSCRIPTION_SDL : '');
  const schema = buildSchema(sdl);

  const authors: AuthorRow[] = [
    { id: 'a1', name: 'Ursula K. Le Guin' },
    { id: 'a2', name: 'Octavia E. Butler' },
  ];
  const books: BookRow[] = [
    { id: 'b1', title: 'A Wizard of Earthsea', authorId: 'a1' },
    { id: 'b2', title: 'The Dispossessed', authorId: 'a1' },
    { id: 'b3', title: 'Kindred', authorId: 'a2' },
  ];
  let nextId = books.length + 1;
  const maxBooks = options.maxBooks ?? DEFAULT_BUILTIN_MAX_BOOKS;
  const maxLibraryBytes = options.maxLibraryBytes ?? DEFAULT_BUILTIN_MAX_LIBRARY_BYTES;
  for (const [key, value] of [['maxBooks', maxBooks], ['maxLibraryBytes', maxLibraryBytes]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new AppError('GraphQl', `builtinSchema options.${key} must be an integer ≥ 1, got ${JSON.stringify(value)}`);
  }
  const sizeOf = (b: BookRow) => Buffer.byteLength(b.title);
  let libraryBytes = books.reduce((n, b) => n + sizeOf(b), 0);
  const pubsub = options.pubsub ?? new MemoryPubSub();
  const topic = options.topic ?? BOOK_ADDED_TOPIC;

  const resolvers: Record<string, Record<string, GraphQLFieldResolver<any, unknown, any>>> = {
    Query: {
      hello: (_s, { name }) => `Hello, ${name ?? 'World'}!`,
      echo: (_s, { message }) => message,
      book: (_s, { id }) => books.find((b) => b.id === id) ?? null,
      books: (_s, { first }) => take(books, first),
      authors: (_s, { first }) => take(authors, first),
    },
    Book: {
      author: (b: BookRow) => authors.find((a) => a.id === b.authorId),
    },
    Author: {
      books: (a: AuthorRow, { first }) => take(books.filter((b) => b.authorId === a.id), first),
    },
    Mutation: {
      addBook: async (_s, { input }: { input: { title: string; authorId: string } }) => {
        if (!authors.some((a) => a.id === input.authorId)) {
          throw new GraphQLError(`No author with id ${input.authorId}`, { extensions: { code: 'NOT_FOUND' } });
        }
        const size = Buffer.byteLength(input.title);
        if (size > maxLibraryBytes) {
          throw new GraphQLError(`title is ${size} bytes; the built-in library holds at most ${maxLibraryBytes} bytes of titles`, {
            extensions: { code: 'BAD_USER_INPUT', limit: maxLibraryBytes },
          });
        }
        const book = { id: `b${nextId++}`, title: input.title, authorId: input.authorId };
        books.push(book);
        libraryBytes += size;
        // A bounded demo store: the oldest books make room (count and bytes), so clients cannot grow it for ever.
        while (books.length > maxBooks || libraryBytes > maxLibraryBytes) libraryBytes -= sizeOf(books.shift()!);
        // Awaited: a cross-instance PubSub that fails to publish fails the mutation visibly.
        await pubsub.publish(topic, book);
        return book;
      },
      deleteBook: (_s, { id }) => {
        const i = books.findIndex((b) => b.id === id);
        if (i < 0) return false;
        libraryBytes -= sizeOf(books.splice(i, 1)[0]!);
        return true;
      },
    },
    Subscription: {
      countdown: (n: number) => n,
      bookAdded: (b: BookRow) => b,
    },
  };
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const t = schema.getType(typeName);
    if (!t || !('getFields' in t)) continue;
    const defs = t.getFields() as Record<string, { resolve?: unknown; subscribe?: unknown }>;
    for (const [name, fn] of Object.entries(fields)) if (defs[name]) defs[name].resolve = fn;
  }
  const sub = schema.getSubscriptionType()?.getFields();
  if (sub) {
    // Checked before the stream starts, so the client gets an `error` instead of a broken stream.
    sub.countdown!.subscribe = (_s, { from }: { from: number }) => {
      if (from > MAX_COUNTDOWN) throw new GraphQLError(`from must be at most ${MAX_COUNTDOWN}`, { extensions: { code: 'BAD_USER_INPUT' } });
      return (async function* countdown() {
        for (let i = from; i >= 0; i--) yield i;
      })();
    };
    // The PubSub's iterator itself (not an async generator around it): graphql-ws's return() on
    // `complete` or close then releases the subscription at once (lib/graphql/pubsub.ts).
    sub.bookAdded!.subscribe = () => pubsub.subscribe(topic);
  }
  return schema;
}
