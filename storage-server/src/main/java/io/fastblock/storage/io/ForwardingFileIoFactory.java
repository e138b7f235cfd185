package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Passes each of {@link FileIoFactory}'s calls to another factory; a subclass overrides the ones it
 * changes (see {@link FileIoFactory#withoutDirectWrites}).
 */
public class ForwardingFileIoFactory implements FileIoFactory {
    protected final FileIoFactory to;

    public ForwardingFileIoFactory(FileIoFactory to) {
        this.to = to;
    }

    @Override
    public FileIo open(Path file, boolean create) throws IOException {
        return to.open(file, create);
    }

    @Override
    public FileIo openDirect(Path file) throws IOException {
        return to.openDirect(file);
    }

    @Override
    public FileIo openDirectReads(Path file) throws IOException {
        return to.openDirectReads(file);
    }

    @Override
    public FileIo openNoReadahead(Path file) throws IOException {
        return to.openNoReadahead(file);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        to.syncDirectory(dir);
    }

    @Override
    public boolean delete(Path file) throws IOException {
        return to.delete(file);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
        this.to.rename(from, to);
    }

    @Override
    public FileSystemSpace space(Path dir) throws IOException {
        return to.space(dir);
    }

    @Override
    public String bootId() {
        return to.bootId();
    }
}
