package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Passes each of {@link FileIo}'s own calls to another; a test overrides the calls it watches. The
 * default methods stay {@link FileIo}'s, so they run through the calls a test sees.
 */
public class ForwardingFileIo implements FileIo {
    protected final FileIo to;

    public ForwardingFileIo(FileIo to) {
        this.to = to;
    }

    @Override
    public Path path() {
        return to.path();
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return to.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        return to.write(src, position);
    }

    @Override
    public void force(boolean metadata) throws IOException {
        to.force(metadata);
    }

    @Override
    public long size() throws IOException {
        return to.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        to.truncate(size);
    }

    @Override
    public void close() throws IOException {
        to.close();
    }
}
