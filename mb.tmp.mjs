import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import express from "express";
import corsPkg from "cors";
import helmet from "helmet";
import compressionPkg from "compression";
import { rateLimit as erl } from "express-rate-limit";
import { cors } from "./node_modules/.cache/keel-bench/middleware/cors/index.js";
import { securityHeaders } from "./node_modules/.cache/keel-bench/middleware/security-headers/index.js";
import { compression } from "./node_modules/.cache/keel-bench/middleware/compression/index.js";
import { rateLimit } from "./node_modules/.cache/keel-bench/middleware/rate-limit/index.js";
const O = { cors: { origin: ["https://app.example.com"] }, helmet: {}, compression: { threshold: 1024 }, rl: { windowMs: 1e3, limit: 1e9, standardHeaders: "draft-7", legacyHeaders: false } };
function mk(stack) {
  const app = express();
  app.disable("x-powered-by");
  if (stack === "pkg") {
    app.use(corsPkg(O.cors));
    app.use(helmet(O.helmet));
    app.use(compressionPkg(O.compression));
    app.use(erl(O.rl));
  }
  if (stack === "keel") {
    app.use(cors(O.cors));
    app.use(securityHeaders({ helmet: O.helmet }));
    app.use(compression(O.compression));
    app.use(rateLimit(O.rl));
  }
  if (stack.startsWith("only-")) {
    const w = stack.slice(5);
    const m = { cors: cors(O.cors), sec: securityHeaders({ helmet: {} }), comp: compression(O.compression), rl: rateLimit(O.rl), pcors: corsPkg(O.cors), psec: helmet(), pcomp: compressionPkg(O.compression), prl: erl(O.rl) }[w];
    app.use(m);
  }
  app.get("/hello", (_req, res) => void res.json({ hello: "world" }));
  return app;
}
const socket = new Socket();
Object.defineProperty(socket, "remoteAddress", { value: "127.0.0.1" });
socket.write = () => true;
async function one(app) {
  const req = new IncomingMessage(socket);
  req.method = "GET";
  req.url = "/hello";
  req.headers = { host: "x", origin: "https://app.example.com", "accept-encoding": "gzip, deflate, br" };
  const res = new ServerResponse(req);
  await new Promise((resolve) => {
    res.end = /* @__PURE__ */ ((orig) => function(...a) {
      const r = orig.apply(this, a);
      resolve();
      return r;
    })(res.end);
    app(req, res);
  });
}
const stacks = process.argv.slice(2);
for (const s of stacks) {
  const app = mk(s);
  for (let i = 0; i < 2e4; i++) await one(app);
  const t0 = process.cpuUsage();
  const N = 4e4;
  for (let i = 0; i < N; i++) await one(app);
  const t = process.cpuUsage(t0);
  console.log(s.padEnd(12), ((t.user + t.system) / N).toFixed(2), "\xB5s/req");
}
