// jambonz's v10-examples examples/s2s/openai/src/index.ts, as its authors wrote it,
// with the TypeScript annotations taken out and its imports written as require (Node
// runs it without tsx, and ES modules ignore the NODE_PATH the tests install the
// SDKs on), and lines for the test: pino writes to stderr, and the app prints JSON
// lines of what it saw on stdout (lib.js's convention) beside its own logging, its
// ready line with the port it listens on (the test gives PORT=0).
'use strict';
const http = require('http');
const { createEndpoint } = require('@jambonz/sdk/websocket');
const pino = require('pino');
const {log} = require('./lib');
const logger = pino({ level: process.env.LOG_LEVEL || 'info' }, pino.destination(2));
const port = parseInt(process.env.PORT || '3000', 10);

const envVars = {
  OPENAI_API_KEY: {
    type: 'string',
    description: 'OpenAI API key',
    required: true,
    obscure: true,
  },
};

const server = http.createServer();
const makeService = createEndpoint({ server, port, envVars });
if (port === 0) server.listen(0); // test line: the SDK listens only on a port it is given
const svc = makeService({ path: '/' });

svc.on('session:new', (session) => {
  const log2 = logger.child({ callSid: session.callSid });
  log2.info({ from: session.from, to: session.to }, 'new call');
  log('session:new', {call_sid: session.callSid, has_key: !!session.data.env_vars?.OPENAI_API_KEY});

  const apiKey = session.data.env_vars?.OPENAI_API_KEY?.trim();

  session
    .on('close', (code) => {
      log2.info({ code }, 'session closed');
      log('close', {code});
    })
    .on('error', (err) => {
      log2.error(err, 'session error');
    })
    .on('/s2s-complete', (evt) => {
      log2.info(evt, 's2s complete');
      log('s2s-complete', {completion_reason: evt.completion_reason});
      session.reply();
    });

  session
    .s2s({
      vendor: 'openai',
      model: 'gpt-4o-realtime-preview',
      auth: {
        apiKey,
      },
      llmOptions: {
        response_create: {
          modalities: ['text', 'audio'],
          instructions: 'You are a friendly and helpful voice assistant. '
            + 'Keep your responses concise and conversational.',
          voice: 'alloy',
        },
        session_update: {
          input_audio_transcription: { model: 'whisper-1' },
          turn_detection: {
            type: 'server_vad',
            threshold: 0.8,
            prefix_padding_ms: 300,
            silence_duration_ms: 500,
          },
        },
      },
      actionHook: '/s2s-complete',
    })
    .send();
});

server.on('listening', () => log('ready', {port: server.address().port}));
process.on('SIGTERM', () => process.exit(0));
logger.info({ port }, 'jambonz s2s/openai example listening');
