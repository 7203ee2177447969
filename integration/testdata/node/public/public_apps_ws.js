// jambonz's public-apps-ws (github.com/jambonz/public-apps-ws, MIT: LICENSE.md), its
// app.js with the route modules of lib/routes inlined as they are written, for the
// test: pino writes to stderr, the WebSocket server listens where ../lib.js says and
// prints its ready line; the queues route (a copy of hello-world), async-1 (async-2
// without parent_call) and async-2 (its sendCommand payload, which @jambonz/node-client
// 0.3.3 sent, 0.4 refuses) are left out.
'use strict';
const {listen} = require('../lib');

/* lib/routes/hello-world.js */
const helloWorld = (() => {
const {WebhookResponse} = require('@jambonz/node-client');
const text = `<speak>
<prosody volume="loud">Hi there,</prosody> and welcome to jambones! 
jambones is the <sub alias="seapass">CPaaS</sub> designed with the needs
of communication service providers in mind.
This is an example of simple text-to-speech, but there is so much more you can do.
Try us out!
</speak>`;

return (ws) => {
  const {logger} = ws.locals;
  ws.on('session:new', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got session:new');
    const app = new WebhookResponse();
    app
      .tag({
        data: {
          foo: 'bar'
        }
      })
      .pause({length: 1.5})
      .say({
        text,
        synthesizer: {
          vendor: 'google',
          language: 'en-US'
        }
      });
    ws.ack(msgid, app);
  });
  ws.on('verb:hook', ({msgid, hook, payload}) => {
    logger.info({msgid, payload, hook}, 'got verb:hook');
    ws.ack(msgid);
  });
  ws.on('call:status', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got call:status');
  });
  ws.on('error', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got error');
  });
  ws.on('close', () => {
    logger.info('socket closed from jambonz, call ended');
  });
};
})();

/* lib/routes/gather-test.js */
const gatherTest = (() => {
const {WebhookResponse} = require('@jambonz/node-client');
const text = 'Hi there.  Please say something and I will try to transcribe it for you';

return (ws) => {
  const {logger} = ws.locals;
  ws.on('session:new', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got session:new');
    const app = new WebhookResponse();
    app
      .play({url: 'silence_stream://1000'})
      .gather({
        input: ['speech'],
        actionHook: '/gather/action',
        timeout: 10,
        say: { text },
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
    ws.ack(msgid, app);
  });

  ws.on('verb:hook', ({msgid, hook, payload}) => {
    logger.info({msgid, payload, hook}, 'got verb:hook');
    let app;
    if (hook === '/gather/action') {
      app = new WebhookResponse();
      if (payload.speech) {
        app
          .say({text: `You said: ${payload.speech.alternatives[0].transcript}`})
          .play({url: 'silence_stream://1000'})
          .gather({
            input: ['speech'],
            actionHook: '/gather/action',
            timeout: 10,
            say: { text },
            recognizer: {
              vendor: 'default',
              language: 'default',
              vad: {
                enable: true,
                mode: 2
              }
            }
          });
      }
      app.redirect({actionHook: '/gather'});
    }
    ws.ack(msgid, app);
  });

  ws.on('call:status', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got call:status');
  });

  ws.on('error', ({msgid, payload}) => {
    logger.info({msgid, payload}, 'got error');
  });

  ws.on('close', () => {
    logger.info('socket closed from jambonz, call ended');
  });
};
})();

/* lib/routes/index.js */
const routes = (() => {
const {WsRouter} = require('@jambonz/node-client');
const router = new WsRouter();

router.use('/hello-world', helloWorld);
router.use('/simple-gather', gatherTest);

return router;
})();

/* app.js */
const {WebSocketServer} = require('ws');
const {WsRouter, WsSession, handleProtocols} = require('@jambonz/node-client');
const router = new WsRouter();
const opts = Object.assign({
  timestamp: () => `, "time": "${new Date().toISOString()}"`,
  level: process.env.LOGLEVEL || 'info'
});
const logger = require('pino')(opts, require('pino').destination(2));
// new WebSocketServer({port, handleProtocols}) on the test's address.
const server = require('http').createServer();
const wss = new WebSocketServer({ server, handleProtocols });
listen(server);

router.use(routes);

wss.on('listening', () => {
  logger.info('websocket server listening on port ${port}'.replace('${port}', server.address().port));
});
wss.on('connection', (ws, req) => {
  new WsSession({logger, router, ws, req});
});
