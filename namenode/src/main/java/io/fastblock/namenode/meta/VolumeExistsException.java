package io.fastblock.namenode.meta;

/** A volume with this name already exists. */
public class VolumeExistsException extends RuntimeException {
    public VolumeExistsException(String name) {
        super("volume '" + name + "' already exists");
    }
}
