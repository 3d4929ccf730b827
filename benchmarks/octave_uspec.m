% Runs the authors' U-SPEC / U-SENC (huangdonghere/USPEC_USENC, checked out by
% benchmarks/bench_uspec.py) on one data file, several times, and saves labels and times.
% Usage: octave-cli octave_uspec.m <authors dir> <data.mat> <method: uspec|usenc> <runs> <out.mat>
% The data file holds fea (n x d), k; the authors' defaults are kept (p = 1000, K = 5, m = 20,
% K_i in [20, 60]); their code seeds itself from the clock, so every run differs.
% The output is saved after every run (labels, wall seconds, CPU seconds of the process, runs
% done), so a run stopped by the caller's time limit still leaves the finished runs.
args = argv();
pkg load statistics
addpath(args{1});
load(args{2});  % fea, k
method = args{3};
runs = str2double(args{4});
labels = zeros(size(fea, 1), runs);
seconds = zeros(runs, 1);
cpu = zeros(runs, 1);
done = 0;
for r = 1:runs
  t0 = tic;
  c0 = cputime();
  if strcmp(method, 'uspec')
    labels(:, r) = USPEC(fea, double(k), 'euclidean', 1000, 5);
  else
    evalc('L = USENC(fea, double(k), 20, ''euclidean'', 1000, 5, 20, 60);');  % its progress text is dropped
    labels(:, r) = L;
  end
  seconds(r) = toc(t0);
  cpu(r) = cputime() - c0;
  done = r;
  save('-mat7-binary', args{5}, 'labels', 'seconds', 'cpu', 'done');
end
