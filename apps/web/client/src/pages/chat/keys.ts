let keys = 0;

/** A key for a list item that has no id yet (a message being sent, an image uploading). */
export const nextKey = () => `m${(keys += 1)}`;
