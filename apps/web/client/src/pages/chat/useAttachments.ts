import { useState } from 'preact/hooks';
import * as chat from '../../api/chat-api.js';
import { type Attachment, type ChatModel } from '../../api/types.js';
import { type DraftImage } from '../../components/ComposerImages.js';
import { screenImages } from '../../components/image-checks.js';
import { useLoad } from '@switchyard/ui';
import { nextKey } from './keys.js';

/**
 * The images in the composer: checked against the API's limits, shown at once and uploaded
 * in the background, refused while the chosen model reads no images. A failure goes to
 * `failed` (the composer's notice); `failed(null)` clears it.
 */
export function useAttachments(
  model: string,
  chosen: ChatModel | undefined,
  failed: (failure: unknown) => void,
) {
  const limits = useLoad(chat.attachmentLimits, []);
  const [images, setImages] = useState<DraftImage[]>([]);

  const refused = chosen?.vision
    ? null
    : `${model || 'The chosen model'} does not read images: choose a model that does to attach them`;
  const uploading = images.some((image) => !image.attachment);
  const accept = (limits.data?.mediaTypes ?? []).join(',') || 'image/*';

  const remove = (key: string) =>
    setImages((all) => {
      const gone = all.find((image) => image.key === key);
      if (gone) URL.revokeObjectURL(gone.preview);
      return all.filter((image) => image !== gone);
    });

  /** Checks, shows and uploads images chosen or pasted into the composer. */
  const add = (files: File[]) => {
    if (refused !== null) {
      failed({ code: 'model_cannot_see_images', message: refused });
      return;
    }
    const attached = images.map((image) => ({ size: image.size }));
    const { accepted, problems } = limits.data
      ? screenImages(files, attached, limits.data)
      : { accepted: files, problems: [] };
    failed(problems.length > 0 ? { code: 'image_not_taken', message: problems.join(' ') } : null);
    for (const file of accepted) {
      const image: DraftImage = {
        key: nextKey(),
        name: file.name || 'pasted image',
        size: file.size,
        preview: URL.createObjectURL(file),
      };
      setImages((all) => [...all, image]);
      chat.uploadImage(file).then(
        (attachment) =>
          setImages((all) => all.map((i) => (i.key === image.key ? { ...i, attachment } : i))),
        (failure: unknown) => {
          remove(image.key);
          failed(failure);
        },
      );
    }
  };

  /** The uploaded images, taken out of the composer to go with the message being sent. */
  const takeAll = (): Attachment[] => {
    const attachments = images.flatMap((image) => (image.attachment ? [image.attachment] : []));
    for (const image of images) URL.revokeObjectURL(image.preview);
    setImages([]);
    return attachments;
  };

  return { images, refused, uploading, accept, add, remove, takeAll };
}
