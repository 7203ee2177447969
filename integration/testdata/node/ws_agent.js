// A voice agent on @jambonz/node-client-ws with its own LLM streamed as tts:tokens
// (the create-jambonz-ws-app llm-streaming template's pattern) and an s2s model that
// calls tools: /agent runs llm with a toolHook (sendToolOutput, updateLlm), /stream
// runs config ttsStream + bargeIn and answers each utterance with sendTtsTokens.
// WRONG_OUTPUT=1 makes the weather tool answer "rain" instead of "sunny".
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});

const agent = makeService({path: '/agent'});
agent.on('session:new', (session) => {
  log('session:new', {call_sid: session.call_sid});
  session
    .on('/event', (evt) => log('llm:event', {type: evt.type}))
    .on('/tool', (evt) => {
      const {name, args, tool_call_id} = evt;
      log('llm:tool-call', {name, args, tool_call_id});
      const output = name === 'get_weather' ?
        (process.env.WRONG_OUTPUT === '1' ? 'rain' : `sunny in ${args.city}`) : 'unknown tool';
      session.sendToolOutput(tool_call_id, {
        type: 'conversation.item.create',
        item: {type: 'function_call_output', call_id: tool_call_id, output},
      });
      session.updateLlm({type: 'session.update', session: {instructions: 'Be brief.'}});
    })
    .on('/done', (evt) => {
      log('llm:done', {completion_reason: evt.completion_reason});
      session.say({text: 'Goodbye.'}).hangup().reply();
    })
    .on('close', (code) => log('close', {code}));
  session
    .llm({
      vendor: 'openai',
      model: 'gpt-4o-realtime-preview',
      auth: {apiKey: session.env_vars?.OPENAI_API_KEY || 'sk-test'},
      llmOptions: {
        response_create: {modalities: ['text', 'audio'], instructions: 'You are a weather assistant.'},
        session_update: {tools: [{type: 'function', name: 'get_weather',
          parameters: {type: 'object', properties: {city: {type: 'string'}}}}]},
      },
      eventHook: '/event',
      toolHook: '/tool',
      actionHook: '/done',
      events: ['response.audio_transcript.done', 'conversation.item.input_audio_transcription.completed'],
    })
    .send();
});

const stream = makeService({path: '/stream'});
stream.on('session:new', (session) => {
  log('session:new', {call_sid: session.call_sid});
  let turns = 0;
  session
    .on('/speech', async(evt) => {
      session.reply();
      const words = evt.speech?.alternatives?.[0]?.transcript;
      log('speech', {words});
      turns++;
      if (turns > 2) {
        session.sendCommand('redirect', [{verb: 'say', text: 'Bye.'}, {verb: 'hangup'}]);
        return;
      }
      try {
        for (const t of ['You said ', `${words}. `, 'Anything else?']) {
          await session.sendTtsTokens(t);
        }
        session.flushTtsTokens();
        log('tokens-sent', {turn: turns});
      } catch (err) {
        log('tokens-error', {message: err.message});
      }
    })
    .on('tts:streaming-event', (evt) => log('tts:streaming-event', {event_type: evt.event_type}))
    .on('tts:user_interrupt', () => log('user-interrupt'))
    .on('close', (code) => log('close', {code}));
  session
    .config({
      ttsStream: {enable: true},
      bargeIn: {enable: true, sticky: true, actionHook: '/speech', input: ['speech']},
    })
    .say({text: 'Hi there, how can I help you today?'})
    .send();
});

listen(server);
