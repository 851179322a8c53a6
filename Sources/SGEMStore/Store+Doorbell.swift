extension Store {
    /// The doorbell on `channel` between the instances on this database (see `Doorbell`): the
    /// same one for every call with that channel, listening from its first use until the store
    /// closes. On SQLite, and once the store is closed, one that does nothing.
    public func doorbell(channel: String) -> Doorbell {
        doorbells.withLock { all in
            if let existing = all.byChannel[channel] { return existing }
            guard !all.closed, case .postgresql(let url) = location else { return Doorbell(channel: channel, listener: nil) }
            let made = Doorbell(channel: channel, listener: PostgresDoorbell(url: url, channel: channel, logger: logger, metrics: metrics))
            all.byChannel[channel] = made
            return made
        }
    }
}
