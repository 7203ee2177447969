// jambonz's jambonz-node-example-app (github.com/jambonz/jambonz-node-example-app,
// MIT: LICENSE.md), its app.js with three of the routers of lib/routes/endpoints
// inlined as they are written (gather, sip-decline, queue-test), for the test: pino
// writes to stderr, the app listens where ../lib.js says and prints its ready line;
// the listen recorder (AWS S3), the Google-sheet credentials and the REST client the
// other routes use are left out with those routes.
'use strict';
const {listen} = require('../lib');

/* lib/routes/endpoints/gather-test.js */
const gatherTest = (() => {
const router = require('express').Router();
const WebhookResponse = require('@jambonz/node-client').WebhookResponse;
const text = 'Hi there.  Please say something and I will try to transcribe it for you';

router.post('/', async(req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /gather');

  try {
    const app = new WebhookResponse();
    app
      .gather({
        input: ['speech'],
        actionHook: '/gather/action',
        timeout: 10,
        say: { text: 'Please say something or other and I will repeat what you said' },
        recognizer: {
          vendor: 'default',
          language: 'default',
          vad: {
            enable: true,
            mode: 2
          }
        }
      })
      .redirect({actionHook: '/gather'});
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

router.post('/action', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, '/gather/action');
  const app = new WebhookResponse();
  if (req.body.speech) {
    app.say({text: `You said: ${req.body.speech.alternatives[0].transcript}`});
  }
  app.redirect({actionHook: '/gather'});
  res.status(200).json(app);
});

return router;
})();

/* lib/routes/endpoints/sip-decline.js */
const sipDecline = (() => {
const router = require('express').Router();
const WebhookResponse = require('@jambonz/node-client').WebhookResponse;
router.post('/', (req, res) => {
  const app = new WebhookResponse();
  app.sip_decline({status: 480});
  res.status(200).json(app);
});

return router;
})();

/* lib/routes/endpoints/queue-test.js */
const queueTest = (() => {
const router = require('express').Router();
const WebhookResponse = require('@jambonz/node-client').WebhookResponse;

router.post('/', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /queue-test');
  try {
    const app = new WebhookResponse();
    app
      .say({text: 'Hello, now handing you over to an agent...'})
      .play({url: 'https://www.kozco.com/tech/piano2.wav'})
      .enqueue({
        name: 'support',
        waitHook: '/queue-test/queue-handler'
      });
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

router.post('/queue-handler', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /queue-test/queue-handler');
  try {
    const app = new WebhookResponse();
    app
      .say({text: 'You are currently fifth in queue'})
      .play({url: 'https://www.kozco.com/tech/piano2.wav'})
      .play({url: 'https://www.kozco.com/tech/piano2.wav'});
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

return router;
})();

/* lib/routes/endpoints/index.js */
const routes = require('express').Router();
routes.use('/gather', gatherTest);
routes.use('/queue-test', queueTest);
routes.use('/sip-decline', sipDecline);

/* app.js */
const express = require('express');
const app = express();
const {WebhookResponse} = require('@jambonz/node-client');
const opts = Object.assign({
  timestamp: () => `, "time": "${new Date().toISOString()}"`,
  level: process.env.LOGLEVEL || 'info'
});
const logger = require('pino')(opts, require('pino').destination(2));
app.locals = {
  ...app.locals,
  logger,
};
app.use(express.urlencoded({ extended: true }));
app.use(express.json());
if (process.env.WEBHOOK_SECRET) {
  const secrets = process.env.WEBHOOK_SECRET.split(',').map((s) => s.trim());
  app.use(WebhookResponse.verifyJambonzSignature(secrets));
}
app.use('/', routes);
app.use((err, req, res, next) => {
  logger.error(err, 'burped error');
  res.status(err.status || 500).json({msg: err.message});
});

// app.listen(port, ...): the server express's listen makes, on the test's address.
listen(require('http').createServer(app));
