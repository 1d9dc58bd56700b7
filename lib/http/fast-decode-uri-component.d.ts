/** The package ships no types. It returns decodeURIComponent's result, or null where that would throw. */
declare module 'fast-decode-uri-component' {
  export default function fastDecodeUriComponent(text: string): string | null;
}
