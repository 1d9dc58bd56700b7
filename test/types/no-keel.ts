/** The same reads without keel's declarations in the program: the test expects TS2339 here. */
import express from 'express';

const app = express();
app.get('/me', (req, res) => {
  res.json({ sub: req.auth, id: req.requestId });
});
