import { audioUrlsIn, mediaFileName, withPrompts } from './generated-media.js';
import { type ShownMessage } from './MessageView.js';

describe('generated media in replies', () => {
  it('finds the sound files a reply links to, once each', () => {
    const reply =
      'Here is a song.\n\n[Listen](http://127.0.0.1:18080/media/audio/0123456789abcdef.wav)\n' +
      'Also https://cdn.example.com/a/b/song.mp3?sig=x%20y and <https://cdn.example.com/c.ogg>, ' +
      'again http://127.0.0.1:18080/media/audio/0123456789abcdef.wav. Not https://example.com/x.wave ' +
      'nor https://example.com/page.html';
    expect(audioUrlsIn(reply)).toEqual([
      'http://127.0.0.1:18080/media/audio/0123456789abcdef.wav',
      'https://cdn.example.com/a/b/song.mp3?sig=x%20y',
      'https://cdn.example.com/c.ogg',
    ]);
    expect(audioUrlsIn('javascript:alert(1).wav and ftp://x/y.wav')).toEqual([]);
  });

  it('names downloads after the file, or after what they are', () => {
    expect(mediaFileName('http://127.0.0.1:18080/media/images/00aa.png', 'image', 0)).toBe(
      '00aa.png',
    );
    expect(mediaFileName('https://files.example.com/img?id=4', 'image', 1)).toBe('image-2.png');
    expect(mediaFileName('data:image/webp;base64,AAAA', 'image', 0)).toBe('image-1.webp');
    expect(mediaFileName('https://cdn.example.com/track', 'audio', 0)).toBe('song-1.wav');
  });

  it('gives each drawn reply the question before it as its prompt, changing nothing else', () => {
    const messages: ShownMessage[] = [
      { key: 'a', role: 'user', content: 'a red fox', images: [] },
      { key: 'b', role: 'assistant', content: '', images: ['https://i.example/1.png'] },
      { key: 'c', role: 'user', content: 'hello', images: [] },
      { key: 'd', role: 'assistant', content: 'Echo: hello', images: [] },
    ];
    const shown = withPrompts(messages);
    expect(shown[1]?.prompt).toBe('a red fox');
    expect(shown[0]).toBe(messages[0]);
    expect(shown[3]).toBe(messages[3]);
    expect(withPrompts(shown)[1]).toBe(shown[1]);
  });
});
