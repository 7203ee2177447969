// jambonz's public-apps (github.com/jambonz/public-apps, MIT: LICENSE.md), its
// app.js with the routers of lib/routes/endpoints inlined as they are written, for
// the test: pino writes to stderr, the app listens where ../lib.js says and prints
// its ready line; the unused static route and sms-ack are left out.
'use strict';
const {listen} = require('../lib');

/* lib/routes/endpoints/hello-world.js */
const helloWorld = (() => {
const router = require('express').Router();
const {WebhookResponse} = require('@jambonz/node-client');


router.post('/', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /hello-world');
  try {
    const app = new WebhookResponse();
    app
      .pause({length: 1.5})
      .play({url: `https://${req.headers.host}/static/welcome.mp3`})
      .pause({length: 1})
      .say({
        text: `This is an example of text to speech, is is using the ${req.body.defaults.synthesizer.voice} voice from ${req.body.defaults.synthesizer.vendor}, and the language code is set to ${req.body.defaults.synthesizer.language}`
      });
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

return router;
})();

/* lib/routes/endpoints/echo.js */
const echo = (() => {
const router = require('express').Router();
const {WebhookResponse} = require('@jambonz/node-client');

router.post('/', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /echo');
  try {
    const app = new WebhookResponse();
    app
      .say({text: 'silence_stream://1000'})
      .gather({
        say: {text: 'Please say something and we will echo it back to you.'},
        input: ['speech'],
        actionHook: '/echo/transcript',
        timeout: 15,
      })
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

router.post('/transcript', (req, res) => {
  const {logger} = req.app.locals;
  const {reason, speech} = req.body;
  logger.debug({payload: req.body}, 'POST /echo/transcript');
  try {
    const app = new WebhookResponse();
    if (reason === 'speechDetected') {
      const {transcript, confidence} = speech.alternatives[0];
      app
        .say({text: `You said: ${transcript}.  The confident score was ${confidence.toFixed(2)}. `});
      if (speech.vendor?.name) {
        app.say({text: `The speech service was provided by ${speech.vendor.name}`});
      }
      app
        .gather({
          say: {text: 'Say something else.'},
          input: ['speech'],
          actionHook: '/echo/transcript',
        });
    }
    else {
      app
      .gather({
        say: {text: 'Are you still there?  I didn\'t hear anything.'},
        input: ['speech'],
        actionHook: '/echo/transcript',
      });
    }
    res.status(200).json(app);
  } catch (err) {
    logger.info({err}, 'Error handling /echo/transcript');
    res.sendStatus(503);
  }
});

return router;
})();

/* lib/routes/endpoints/dial.js */
const dial = (() => {
const router = require('express').Router();
const WebhookResponse = require('@jambonz/node-client').WebhookResponse;

router.post('/', (req, res) => {
  const {logger} = req.app.locals;
  logger.debug({payload: req.body}, 'POST /dial');
  try {
    const app = new WebhookResponse();
    app.dial({
      answerOnBridge: true,
      target: [
        {
          type: 'phone',
          number: req.body.to
        }
      ]
    });
    res.status(200).json(app);
  } catch (err) {
    logger.error({err}, 'Error');
    res.sendStatus(503);
  }
});

return router;
})();

/* lib/routes/endpoints/index.js */
const endpoints = require('express').Router();
endpoints.use('/hello-world', helloWorld);
endpoints.use('/dial', dial);
endpoints.use('/echo', echo);

/* app.js */
const express = require('express');
const app = express();
const opts = Object.assign({
  timestamp: () => `, "time": "${new Date().toISOString()}"`,
  level: process.env.LOGLEVEL || 'info'
});
const logger = require('pino')(opts, require('pino').destination(2));
const routes = endpoints;
app.locals = {
  ...app.locals,
  logger
};

app.use(express.urlencoded({ extended: true }));
app.use(express.json());
app.use('/', routes);
app.use((err, req, res, next) => {
  logger.error(err, 'burped error');
  res.status(err.status || 500).json({msg: err.message});
});

// app.listen(port, ...): the server express's listen makes, on the test's address.
listen(require('http').createServer(app));
