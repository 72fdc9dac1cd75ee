# The answers a process keeps: for `failure: stale` (answer from the last
# answer when no server answers) and whole datasources, revalidated with
# their ETag. Bounded (the oldest stored goes first) and safe to share
# between threads.
require_relative 'client'

module PuppetX::Hierad
  class Cache
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

  # Whole datasources (GET /api/v1/data/{env}/{resource}), each kept with
  # its ETag and revalidated at every read: one small request when
  # nothing changed. Read by the Hiera 5 functions, and by the Hiera 3
  # backend beside other backends.
  class Datasources
    # A datasource nobody wrote: empty, as a missing file is to yaml_data.
    NOT_DEFINED = /\Aresource ".*" is not defined in environment /.freeze

    # `convert`: made of each new copy once (Hiera 5: String keys).
    def initialize(&convert)
      @convert = convert || :itself.to_proc
      @kept = Cache.new(2_000)
    end

    # The datasource `resource` of environment `env` at `level` (the
    # root when empty), as of `pin`'s generation or tag if it names one.
    # With `stale`, when no server answers, the last copy, after yielding
    # the warning to give.
    def fetch(client, env, level, resource, stale, pin = {})
      path = "/api/v1/data/#{Escape.component(env)}/#{Escape.component(resource, '/')}"
      query = { 'level' => level }.merge(pin).reject { |_, v| v.to_s.empty? }.map { |k, v| "#{k}=#{Escape.component(v)}" }
      path += "?#{query.join('&')}" unless query.empty?
      key = "#{client.urls.join(' ')} #{path}"
      etag, data = @kept[key]
      begin
        response = client.get(path, etag ? { 'If-None-Match' => etag } : {})
      rescue Error
        raise unless stale && data

        yield "#{$!.message}; using the copy of #{path} fetched earlier (failure: stale)"
        return data
      end
      return data if response.status == 304
      return {} if response.status == 404 && response.error_message =~ NOT_DEFINED
      raise client.refused("GET #{path}", response) unless response.status == 200

      data = @convert.call(Wire.load(response.body))
      @kept[key] = [response.headers['etag'], data] if response.headers['etag']
      data
    end
  end
end
