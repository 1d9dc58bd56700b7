// keel/express4 as an ES module: the default export and the named exports of express@4, typed from the app's
// @types/express (see express4.d.cts).
import express from './express4.cjs';
export default express;
export {
  application, json, query, raw, request, response, Route, Router, static, text, urlencoded,
  type Application, type CookieOptions, type Errback, type ErrorRequestHandler, type Express, type Handler,
  type IRoute, type IRouter, type IRouterHandler, type IRouterMatcher, type Locals, type MediaType, type NextFunction,
  type Request, type RequestHandler, type RequestParamHandler, type Response, type RouterOptions, type Send,
} from './express4.cjs';
