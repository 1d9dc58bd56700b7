import { createApp } from 'keel';

const newUser = { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } } as const;

const app = createApp({ port: 8000, enable_request_id: true }, (app) => {
  app.get('/users/{id:int}', (data) => ({ id: data.pathParams.id })); // id: number
  app.post('/users', (data) => ({ created: data.body.email }), { body: newUser }); // email: string
});

await app.listen(); // Ctrl-C (SIGINT) or SIGTERM: graceful shutdown
