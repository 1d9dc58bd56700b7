import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import request from 'supertest';
import express5 from './index.js';
import express4 from './express4.js';

// The ecosystem packages are CommonJS without bundled types; loaded as Express apps load them.
const require = createRequire(import.meta.url);
const session = require('express-session');
const passport = require('passport');
const { Strategy: LocalStrategy } = require('passport-local');
const multer = require('multer');
const morgan = require('morgan');
const cookieParser = require('cookie-parser');

const USERS = new Map([['ada', { id: 'ada', name: 'Ada Lovelace', password: 'analytical' }]]);

/** A small app as legacy Express apps are written: the packages wired in the usual order. */
function buildApp(express: any) {
  const log: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, done) {
      log.push(String(chunk));
      done();
    },
  });

  const auth = new passport.Passport();
  auth.use(new LocalStrategy((username: string, password: string, done: any) => {
    const user = USERS.get(username);
    done(null, user && user.password === password ? user : false);
  }));
  auth.serializeUser((user: any, done: any) => done(null, user.id));
  auth.deserializeUser((id: string, done: any) => done(null, USERS.get(id) ?? false));

  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: 1024 } });

  const app = express();
  app.use(morgan(':method :url :status :res[content-length]', { stream: logStream }));
  app.use(cookieParser('cookie secret'));
  app.use(express.urlencoded({ extended: false }));
  app.use(express.json());
  app.use(session({ secret: 'session secret', resave: false, saveUninitialized: false, name: 'sid' }));
  app.use(auth.initialize());
  app.use(auth.session());

  app.post('/login', auth.authenticate('local'), (req: any, res: any) => res.json({ user: req.user.name }));
  app.post('/logout', (req: any, res: any, next: any) => req.logout((err: unknown) => (err ? next(err) : res.sendStatus(204))));

  const requireUser = (req: any, res: any, next: any) => (req.isAuthenticated() ? next() : res.status(401).json({ error: 'login first' }));
  app.get('/me', requireUser, (req: any, res: any) => res.json({ id: req.user.id, name: req.user.name }));

  app.post('/upload', requireUser, upload.single('file'), (req: any, res: any) => {
    res.json({ title: req.body.title, name: req.file.originalname, size: req.file.size, text: req.file.buffer.toString() });
  });

  app.get('/remember', (_req: any, res: any) => res.cookie('theme', 'dark', { signed: true, httpOnly: true }).send('ok'));
  app.get('/prefs', (req: any, res: any) => res.json({ signed: req.signedCookies, plain: req.cookies }));

  // multer's errors carry a code, no status
  app.use((err: any, _req: any, res: any, _next: any) =>
    res.status(err.code === 'LIMIT_FILE_SIZE' ? 413 : err.status ?? 500).json({ error: err.code ?? err.message }));
  return { app, log };
}

async function until(check: () => boolean): Promise<void> {
  // morgan writes on the response's 'finish', which can come a tick after the client has the response
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

for (const [name, express] of [['keel/express', express5], ['keel/express4', express4]] as const) {
  describe(`ecosystem packages on ${name}: when an app uses express-session, passport-local, multer, morgan and cookie-parser`, () => {
    it('should refuse a wrong password and keep /me closed', async () => {
      const { app } = buildApp(express);
      const agent = request.agent(app);
      const login = await agent.post('/login').type('form').send({ username: 'ada', password: 'wrong' });
      assert.equal(login.status, 401);
      assert.equal(login.headers['set-cookie'], undefined);
      const me = await agent.get('/me');
      assert.equal(me.status, 401);
      assert.deepEqual(me.body, { error: 'login first' });
    });

    it('should log in, give a session cookie, open the protected route, and close it again on logout', async () => {
      const { app } = buildApp(express);
      const agent = request.agent(app);
      const login = await agent.post('/login').type('form').send({ username: 'ada', password: 'analytical' });
      assert.equal(login.status, 200);
      assert.deepEqual(login.body, { user: 'Ada Lovelace' });
      const cookie = String(login.headers['set-cookie']);
      assert.match(cookie, /^sid=s%3A[^;]+; Path=\/; HttpOnly/);

      const me = await agent.get('/me');
      assert.equal(me.status, 200);
      assert.deepEqual(me.body, { id: 'ada', name: 'Ada Lovelace' });

      assert.equal((await agent.post('/logout')).status, 204);
      assert.equal((await agent.get('/me')).status, 401);
    });

    it('should take a multipart upload with a field and a file for a logged-in user', async () => {
      const { app } = buildApp(express);
      const agent = request.agent(app);
      await agent.post('/login').send({ username: 'ada', password: 'analytical' }).expect(200);
      const res = await agent.post('/upload').field('title', 'notes').attach('file', Buffer.from('hello multer'), 'notes.txt');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { title: 'notes', name: 'notes.txt', size: 12, text: 'hello multer' });

      const tooBig = await agent.post('/upload').attach('file', Buffer.alloc(2048, 'x'), 'big.bin');
      assert.equal(tooBig.status, 413);
      assert.deepEqual(tooBig.body, { error: 'LIMIT_FILE_SIZE' });
    });

    it('should sign a cookie with res.cookie and read it back in req.signedCookies, rejecting a forged one', async () => {
      const { app } = buildApp(express);
      const set = await request(app).get('/remember');
      const cookie = String(set.headers['set-cookie']).split(';')[0]!;
      assert.match(cookie, /^theme=s%3Adark\./);

      const read = await request(app).get('/prefs').set('Cookie', cookie);
      assert.deepEqual(read.body, { signed: { theme: 'dark' }, plain: {} });

      const forged = await request(app).get('/prefs').set('Cookie', 'theme=s%3Alight.forgedsignature');
      assert.deepEqual(forged.body, { signed: { theme: false }, plain: {} });
    });

    it('should have morgan write one line per request to its stream', async () => {
      const { app, log } = buildApp(express);
      await request(app).get('/me').expect(401);
      await request(app).get('/remember').expect(200);
      await until(() => log.length >= 2);
      assert.deepEqual(log, ['GET /me 401 23\n', 'GET /remember 200 2\n']);
    });
  });
}
