// keel/express as an ES module: the default export and the named exports of express@5, typed from the app's
// @types/express (see index.d.cts).
import express from './index.cjs';
export default express;
export {
  application, json, raw, request, response, Route, Router, static, text, urlencoded,
  type Application, type CookieOptions, type Errback, type ErrorRequestHandler, type Express, type Handler,
  type IRoute, type IRouter, type IRouterHandler, type IRouterMatcher, type Locals, type MediaType, type NextFunction,
  type Request, type RequestHandler, type RequestParamHandler, type Response, type RouterOptions, type Send,
} from './index.cjs';
