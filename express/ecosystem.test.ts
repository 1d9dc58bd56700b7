import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import cookieParser from 'cookie-parser';
import session from 'express-session';
import morgan from 'morgan';
import multer from 'multer';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import request from 'supertest';
import express from './index.js';

/** An app assembled from the middleware Express users install, on keel/express. */
function buildApp(log: string[]) {
  const app = express();
  const auth = new passport.Passport();
  auth.use(new LocalStrategy((username, password, done) => {
    done(null, username === 'tobi' && password === 'ferret' ? { id: 1, username } : false);
  }));
  auth.serializeUser((user: any, done) => done(null, user.id));
  auth.deserializeUser((id: number, done) => done(null, id === 1 ? { id: 1, username: 'tobi' } : false));
  const upload = multer({ storage: multer.memoryStorage() });

  app.use(morgan(':method :url :status', { stream: { write: (line: string) => { log.push(line.trim()); } } }));
  app.use(cookieParser('cookie secret'));
  app.use(express.urlencoded({ extended: false }));
  app.use(session({ secret: 'session secret', resave: false, saveUninitialized: false }));
  app.use(auth.session());
  app.post('/login', auth.authenticate('local', { failureRedirect: '/login' }), (_req: any, res: any) => res.redirect('/me'));
  app.get('/me', (req: any, res: any) => {
    if (!req.user) return res.status(401).json({ error: 'not signed in' });
    res.json({ user: req.user.username, theme: req.signedCookies.theme ?? null });
  });
  app.get('/theme/:name', (req: any, res: any) => res.cookie('theme', req.params.name, { signed: true }).send('set'));
  app.post('/upload', upload.single('file'), (req: any, res: any) => {
    res.json({ title: req.body.title, name: req.file.originalname, size: req.file.size });
  });
  return app;
}

describe('when an Express app with session, passport-local, multer, morgan and cookie-parser runs on keel/express', () => {
  it('should sign in with passport, keep the session and read signed cookies', async () => {
    const log: string[] = [];
    const agent = request.agent(buildApp(log));
    await agent.get('/me').expect(401);
    await agent.post('/login').type('form').send({ username: 'tobi', password: 'wrong' }).expect(302).expect('Location', '/login');
    await agent.post('/login').type('form').send({ username: 'tobi', password: 'ferret' }).expect(302).expect('Location', '/me');
    await agent.get('/theme/dark').expect(200, 'set');
    await agent.get('/me').expect(200, { user: 'tobi', theme: 'dark' });
    assert.deepEqual(log.slice(0, 3), ['GET /me 401', 'POST /login 302', 'POST /login 302']);
  });

  it('should take a multipart upload through multer', async () => {
    const res = await request(buildApp([])).post('/upload')
      .field('title', 'report')
      .attach('file', Buffer.from('hello world'), 'hello.txt')
      .expect(200);
    assert.deepEqual(res.body, { title: 'report', name: 'hello.txt', size: 11 });
  });
});
