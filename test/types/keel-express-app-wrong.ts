// Must not compile: keel's entry keeps @types/express's checks (test/types.test.ts expects exactly these errors).
import express from 'keel/express';

const app = express();
app.get('/users/:id', (req, res) => {
  const id: number = req.params.id; // TS2322: a route parameter is a string
  res.status('200').send(id); // TS2345: a status is a number
});
app.use(express.json({ limit: true })); // TS2322: limit is a number or a string
