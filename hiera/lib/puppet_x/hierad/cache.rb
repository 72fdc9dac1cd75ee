# The answers a process keeps: for `failure: stale` (answer from the last
# answer when no server answers) and for revalidating whole datasources.
# Bounded (the oldest stored goes first) and safe to share between threads.
module PuppetX
  module Hierad
    class Cache
      # What `failure:` may say: fail (the default), or answer from the
      # last answer received. Neither ever turns an outage into not-found.
      FAILURE_MODES = %w[error stale].freeze

      def initialize(max)
        @max = max
        @entries = {}
        @mutex = Mutex.new
      end

      def [](key)
        @mutex.synchronize { @entries[key] }
      end

      def []=(key, value)
        @mutex.synchronize do
          @entries.delete(key)
          @entries.shift if @entries.size >= @max
          @entries[key] = value
        end
      end
    end
  end
end
