// jambonz's v10-examples examples/gather/echo/src/index.ts (github.com/jambonz/v10-examples,
// MIT: LICENSE.md), as its authors wrote it, with the TypeScript annotations taken out
// and its imports written as require (Node runs it without tsx, and ES modules ignore
// the NODE_PATH the tests install the SDKs on), and lines for the test: pino writes to
// stderr, the app listens on the port the kernel picks when the test gives PORT=0,
// and prints its ready line (../lib.js's convention).
'use strict';
const {log} = require('../lib');
const http = require('http');
const { createEndpoint } = require('@jambonz/sdk/websocket');
const pino = require('pino');

const logger = pino({ level: process.env.LOG_LEVEL || 'info' }, pino.destination(2));
const port = parseInt(process.env.PORT || '3000', 10);

const server = http.createServer();
const makeService = createEndpoint({ server, port });
if (port === 0) server.listen(0); // test line: the SDK listens only on a port it is given
const svc = makeService({ path: '/' });

svc.on('session:new', (session) => {
  const log = logger.child({ callSid: session.callSid });
  log.info({ from: session.from, to: session.to }, 'new call');

  session
    .on('close', (code) => {
      log.info({ code }, 'session closed');
    })
    .on('error', (err) => {
      log.error(err, 'session error');
    })
    .on('/echo', (evt) => {
      log.debug({ reason: evt.reason }, 'gather event');

      switch (evt.reason) {
        case 'speechDetected': {
          const speech = evt.speech;
          const { transcript, confidence } = speech.alternatives[0];
          log.info({ transcript, confidence }, 'speech detected');

          session
            .say({
              text: confidence
                ? `You said: ${transcript}. The confidence score was ${confidence.toFixed(2)}.`
                : `You said: ${transcript}.`,
            })
            .gather({
              input: ['speech'],
              actionHook: '/echo',
              timeout: 15,
              say: { text: 'Please say something else.' },
            })
            .reply();
          break;
        }
        case 'timeout':
          session
            .gather({
              input: ['speech'],
              actionHook: '/echo',
              timeout: 15,
              say: { text: 'Are you still there? I didn\'t hear anything.' },
            })
            .reply();
          break;
        default:
          session.reply();
          break;
      }
    });

  session
    .pause({ length: 1 })
    .gather({
      input: ['speech'],
      actionHook: '/echo',
      timeout: 15,
      say: { text: 'Please say something and I will echo it back to you.' },
    })
    .send();
});

logger.info({ port }, 'jambonz gather/echo example listening');
server.on('listening', () => log('ready', {port: server.address().port}));
process.on('SIGTERM', () => process.exit(0));
