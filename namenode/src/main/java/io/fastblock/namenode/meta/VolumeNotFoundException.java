package io.fastblock.namenode.meta;

/** No volume with this name exists (or it was deleted while the request ran). */
public class VolumeNotFoundException extends RuntimeException {
    public VolumeNotFoundException(String name) {
        super("volume '" + name + "' not found");
    }
}
